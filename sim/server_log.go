package sim

import (
	"context"
	"net/http"

	"google.golang.org/grpc/codes"

	"github.com/tritontop/tritontop/internal/textsafe"
	"github.com/tritontop/tritontop/triton/kserve"
	"github.com/tritontop/tritontop/triton/pb"
)

// logSettings are Triton's logging settings a client reads and changes
// (the simulator logs nothing; it remembers what it was told).
type logSettings struct {
	file                 string
	info, warning, error bool
	verbose              uint32
	format               string
}

// defaultLog is Triton's logging configuration with default flags.
func defaultLog() logSettings {
	return logSettings{info: true, warning: true, error: true, format: "default"}
}

// errLogFile is Triton's answer to a change of the log file.
var errLogFile = &kserve.Error{Code: codes.Unimplemented, Message: "log file location can not be updated through network protocol"}

// updateLog applies a change under the lock and returns the settings
// after it; a change that fails keeps what it applied before the failure,
// as Triton's settings do.
func (s *settingsStore) updateLog(change func(*logSettings) error) (logSettings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	err := change(&s.log)
	return s.log, err
}

// LogSettings implements GRPCInferenceServiceServer, with the checks and
// messages of Triton's gRPC frontend, in its order.
func (g *grpcService) LogSettings(_ context.Context, req *pb.LogSettingsRequest) (*pb.LogSettingsResponse, error) {
	set := req.GetSettings()
	cur, err := g.settings.updateLog(func(l *logSettings) error {
		if _, ok := set["log_file"]; ok {
			return errLogFile
		}
		for _, b := range []struct {
			key string
			to  *bool
		}{{"log_info", &l.info}, {"log_warning", &l.warning}, {"log_error", &l.error}} {
			if v, ok := set[b.key]; ok {
				p, isBool := v.GetParameterChoice().(*pb.LogSettingsRequest_SettingValue_BoolParam)
				if !isBool {
					return invalidArg("expect boolean for '%s'", b.key)
				}
				*b.to = p.BoolParam
			}
		}
		if v, ok := set["log_verbose_level"]; ok {
			p, isUint := v.GetParameterChoice().(*pb.LogSettingsRequest_SettingValue_Uint32Param)
			if !isUint {
				return invalidArg("expect int32 for 'log_verbose_level'")
			}
			l.verbose = p.Uint32Param
		}
		if v, ok := set["log_format"]; ok {
			p, isString := v.GetParameterChoice().(*pb.LogSettingsRequest_SettingValue_StringParam)
			if !isString {
				return invalidArg("expect string for 'log_format'")
			}
			if p.StringParam != "ISO8601" && p.StringParam != "default" {
				return invalidArg("invalid argument for log_format, got: %s", textsafe.Bound(p.StringParam))
			}
			l.format = p.StringParam
		}
		return nil
	})
	if err != nil {
		return nil, grpcError(err)
	}
	str := func(v string) *pb.LogSettingsResponse_SettingValue {
		return &pb.LogSettingsResponse_SettingValue{ParameterChoice: &pb.LogSettingsResponse_SettingValue_StringParam{StringParam: v}}
	}
	boolean := func(v bool) *pb.LogSettingsResponse_SettingValue {
		return &pb.LogSettingsResponse_SettingValue{ParameterChoice: &pb.LogSettingsResponse_SettingValue_BoolParam{BoolParam: v}}
	}
	return &pb.LogSettingsResponse{Settings: map[string]*pb.LogSettingsResponse_SettingValue{
		"log_file": str(cur.file), "log_info": boolean(cur.info), "log_warning": boolean(cur.warning),
		"log_error":         boolean(cur.error),
		"log_verbose_level": {ParameterChoice: &pb.LogSettingsResponse_SettingValue_Uint32Param{Uint32Param: cur.verbose}},
		"log_format":        str(cur.format),
	}}, nil
}

// logging answers GET and POST /v2/logging as Triton's HTTP frontend
// does: a POST's members applied in Triton's order (nulls and unknown
// names ignored), each failing with TritonJson's words or Triton's own.
func (h *httpHandler) logging(w http.ResponseWriter, r *http.Request) {
	jsonReply(w)
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeErrorStatus(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	var doc jval
	if r.Method == http.MethodPost {
		hold := newBudgetHold(h.budget)
		defer hold.close()
		var err error
		if doc, _, err = h.readJSON(r, hold, true); err != nil {
			writeError(w, err)
			return
		}
	}
	cur, err := h.settings.updateLog(func(l *logSettings) error { return applyLogJSON(doc, l) })
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		File    string `json:"log_file"`
		Info    bool   `json:"log_info"`
		Warning bool   `json:"log_warning"`
		Error   bool   `json:"log_error"`
		Verbose uint32 `json:"log_verbose_level"`
		Format  string `json:"log_format"`
	}{cur.file, cur.info, cur.warning, cur.error, cur.verbose, cur.format})
}

// applyLogJSON applies an HTTP logging request's members to l.
func applyLogJSON(doc jval, l *logSettings) error {
	if v, ok := doc.find("log_file"); ok && !v.isNull() {
		return errLogFile
	}
	for _, b := range []struct {
		key string
		to  *bool
	}{{"log_info", &l.info}, {"log_warning", &l.warning}, {"log_error", &l.error}} {
		if v, ok := doc.find(b.key); ok && !v.isNull() {
			on, err := v.boolOr()
			if err != nil {
				return err
			}
			*b.to = on
		}
	}
	if v, ok := doc.find("log_verbose_level"); ok && !v.isNull() {
		n, err := v.uintOr()
		if err != nil {
			return err
		}
		l.verbose = uint32(n)
	}
	if v, ok := doc.find("log_format"); ok && !v.isNull() {
		f, err := v.stringOr()
		if err != nil {
			return err
		}
		if f != "ISO8601" && f != "default" {
			return &kserve.Error{Code: codes.Unavailable, Message: "invalid argument for --log_format, got: " + textsafe.Bound(f)}
		}
		l.format = f
	}
	return nil
}
