package schema

// Wire is the JSON form of an ExtractionMessage, for the tests of its
// members.
type Wire = wire
