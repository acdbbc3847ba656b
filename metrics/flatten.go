package metrics

import (
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Flatten turns parsed metric families into one value per series, keyed name{label=value,…}
// (labels in the order the page gives them; just the name when there are none): what a test
// or a script compares against /status. A histogram's key holds its sample count.
func Flatten(families map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.Metric {
			key := name
			if len(m.Label) > 0 {
				var ls []string
				for _, l := range m.Label {
					ls = append(ls, l.GetName()+"="+l.GetValue())
				}
				key += "{" + strings.Join(ls, ",") + "}"
			}
			switch {
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Untyped != nil:
				out[key] = m.Untyped.GetValue()
			case m.Histogram != nil:
				out[key] = float64(m.Histogram.GetSampleCount())
			case m.Summary != nil:
				out[key] = float64(m.Summary.GetSampleCount())
			}
		}
	}
	return out
}
