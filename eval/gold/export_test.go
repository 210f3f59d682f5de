package gold

// RealChatUserTurns is realChatUserTurns, for the test that holds the
// README to it.
const RealChatUserTurns = realChatUserTurns
