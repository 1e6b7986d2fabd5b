package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Output writes rep to out, as JSON when asJSON is set or else as the table
// (WriteTable), and also as JSON to file when it is not "".
func Output(rep Report, out io.Writer, asJSON bool, file string) error {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encode the report: %w", err)
	}
	js = append(js, '\n')
	if file != "" {
		if err := os.WriteFile(file, js, 0o644); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	if asJSON {
		_, err = out.Write(js)
	} else {
		err = WriteTable(out, rep)
	}
	if err != nil {
		return fmt.Errorf("bench: write the report: %w", err)
	}
	return nil
}
