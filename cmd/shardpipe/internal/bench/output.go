package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Output writes rep to out, as JSON when asJSON is set or else as the table
// (WriteTable), and also, when file is not "", as JSON to file and as a
// chart (WriteChart) beside it, at ChartPath(file).
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
		var chart bytes.Buffer
		if err := WriteChart(&chart, rep); err != nil {
			return fmt.Errorf("bench: draw the chart: %w", err)
		}
		if err := os.WriteFile(ChartPath(file), chart.Bytes(), 0o644); err != nil {
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
