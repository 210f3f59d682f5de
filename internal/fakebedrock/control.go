package fakebedrock

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The stand-in also answers three read calls of Bedrock's control plane
// (the bedrock client, not bedrockruntime), enough for a preflight to ask
// whether a model and an inference profile are served in a Region; moto
// implements none of them. It speaks their REST-JSON wire format, as the
// aws-sdk-go-v2 bedrock client serializes and deserializes it:
//
//	GET /foundation-models                 ListFoundationModels: {"modelSummaries":[…]}
//	GET /foundation-models/{modelId}       GetFoundationModel: {"modelDetails":{…}}
//	GET /inference-profiles/{profileId}    GetInferenceProfile: {"inferenceProfileId",…,"models":[{"modelArn"}]}
//
// The catalogue is empty until AddModel and AddProfile fill it: an unknown
// ID is a 404 ResourceNotFoundException, as Bedrock answers for a model or
// profile its Region does not serve.

// AddModel makes the control plane list and describe the foundation model
// modelID of provider as ACTIVE and callable on demand and through an
// inference profile, until Reset.
func (s *Server) AddModel(modelID, provider string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.models == nil {
		s.models = map[string]string{}
	}
	s.models[modelID] = provider
}

// AddProfile makes the control plane describe the system-defined inference
// profile profileID, ACTIVE, routing to the foundation models modelIDs,
// until Reset.
func (s *Server) AddProfile(profileID string, modelIDs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.profiles == nil {
		s.profiles = map[string][]string{}
	}
	s.profiles[profileID] = modelIDs
}

// modelARN is the ARN Bedrock gives a foundation model; the stand-in has
// no Region of its own and says us-east-1.
func modelARN(id string) string { return "arn:aws:bedrock:us-east-1::foundation-model/" + id }

func modelDetails(id, provider string) map[string]any {
	return map[string]any{
		"modelArn": modelARN(id), "modelId": id, "modelName": id, "providerName": provider,
		"inputModalities": []string{"TEXT"}, "outputModalities": []string{"TEXT"},
		"responseStreamingSupported": true,
		"inferenceTypesSupported":    []string{"ON_DEMAND", "INFERENCE_PROFILE"},
		"modelLifecycle":             map[string]string{"status": "ACTIVE"},
	}
}

// control serves the control-plane reads; it reports whether path was
// one of them.
func (s *Server) control(w http.ResponseWriter, r *http.Request, path string) bool {
	if r.Method != http.MethodGet {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case path == "/foundation-models":
		var list []map[string]any
		for _, id := range slices.Sorted(maps.Keys(s.models)) {
			list = append(list, modelDetails(id, s.models[id]))
		}
		writeJSON(w, http.StatusOK, map[string]any{"modelSummaries": list})
	case strings.HasPrefix(path, "/foundation-models/"):
		id, _ := url.PathUnescape(strings.TrimPrefix(path, "/foundation-models/"))
		provider, ok := s.models[id]
		if !ok {
			writeError(w, http.StatusNotFound, ErrResourceNotFound, "The model "+id+" is not found in this Region.")
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"modelDetails": modelDetails(id, provider)})
	case strings.HasPrefix(path, "/inference-profiles/"):
		id, _ := url.PathUnescape(strings.TrimPrefix(path, "/inference-profiles/"))
		models, ok := s.profiles[id]
		if !ok {
			writeError(w, http.StatusNotFound, ErrResourceNotFound, "The inference profile "+id+" is not found in this Region.")
			return true
		}
		var arns []map[string]string
		for _, m := range models {
			arns = append(arns, map[string]string{"modelArn": modelARN(m)})
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"inferenceProfileId": id, "inferenceProfileName": id,
			"inferenceProfileArn": "arn:aws:bedrock:us-east-1:123456789012:inference-profile/" + id,
			"status":              "ACTIVE", "type": "SYSTEM_DEFINED", "models": arns,
		})
	default:
		return false
	}
	return true
}
