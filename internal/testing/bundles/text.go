package bundles

import (
	"hash/fnv"
	"strings"
)

// source is a splitmix64 generator. The bundles promise the same bytes for
// the same inputs on every Go release, and math/rand/v2's helpers (IntN,
// Float64) do not promise their algorithms, so the few lines are written
// here.
type source struct{ state uint64 }

func newSource(seed ...string) *source {
	h := fnv.New64a()
	for _, s := range seed {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	return &source{state: h.Sum64()}
}

func (s *source) next() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn is in [0, n). The modulo bias is far below anything a schema's shape
// could show.
func (s *source) intn(n int) int { return int(s.next() % uint64(n)) }

// float is in [0, 1).
func (s *source) float() float64 { return float64(s.next()>>11) / (1 << 53) }

// between is in [lo, hi].
func (s *source) between(lo, hi int) int { return lo + s.intn(hi-lo+1) }

// words are what the descriptions are made of: the vocabulary of an
// operator's API reference. Letters only, so that a description never needs
// quoting in YAML and never holds "${", which Pulumi YAML would interpolate.
var words = strings.Fields(`
	the a of to in for and or is be by when if this that which with from on as it its not are
	Prometheus Alertmanager Thanos operator instance instances pod pods container containers
	endpoint endpoints target targets scrape scraping rule rules alert alerts receiver route
	selector selectors label labels annotation annotations namespace namespaces service
	configuration configured default defaults value values field fields object objects
	resource resources secret secrets key keys reference references name names storage volume
	volumes mount interval timeout duration retention replica replicas shard shards sample
	samples limit limits request requests metric metrics relabeling relabel series query
	queries remote write read TLS certificate authority client server authorization
	authentication token bearer header headers proxy URL path port protocol scheme HTTP HTTPS
	enabled disabled optional required deprecated experimental feature version versions
	specifies defines controls determines sets overrides applies uses takes must should may
	cannot only unless otherwise see also more details will at least most per each every
	empty unset zero negative positive number maximum minimum seconds minutes
`)

// sentence is 5 to 18 words, capitalized, ending in a period, with a comma
// now and then.
func (s *source) sentence() string {
	n := s.between(5, 18)
	var b strings.Builder
	for i := 0; i < n; i++ {
		w := words[s.intn(len(words))]
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		if i > 0 && i < n-2 && s.intn(9) == 0 {
			b.WriteByte(',')
		}
	}
	b.WriteByte('.')
	return b.String()
}

// paragraph is sentences sentences.
func (s *source) paragraph(sentences int) string {
	parts := make([]string, sentences)
	for i := range parts {
		parts[i] = s.sentence()
	}
	return strings.Join(parts, " ")
}

// wrap breaks text into lines of at most width bytes, between words, as
// controller-gen keeps the line breaks of the Go comments it copies.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// description is a `description:` key at indent: on one line if it fits,
// else as a literal block, as the CRDs that controller-gen writes have them.
func description(indent int, text string) string {
	pad := strings.Repeat(" ", indent)
	if len(text) <= 70 {
		return pad + "description: " + text + "\n"
	}
	var b strings.Builder
	b.WriteString(pad + "description: |-\n")
	for _, l := range wrap(text, 80) {
		b.WriteString(pad + "  " + l + "\n")
	}
	return b.String()
}
