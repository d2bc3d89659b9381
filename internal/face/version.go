package face

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FilesVersion names the model files at paths by content, for the model_version of results:
// "<base name>@<first 8 hex digits of SHA-256>" of each file, joined by "+". Swapping a
// model file changes it.
func FilesVersion(paths ...string) (string, error) {
	parts := make([]string, 0, len(paths))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("model version: %w", err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("model version: read %s: %w", filepath.Base(p), err)
		}
		parts = append(parts, filepath.Base(p)+"@"+hex.EncodeToString(h.Sum(nil))[:8])
	}
	return strings.Join(parts, "+"), nil
}
