package yamldocs

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// built keeps the kustomize builds of this process with everything each
// build asked the disk, so that a call that builds the same kustomization
// again takes the kept result. In one provider process a set's plan and its
// apply each read the source (Terraform plans again before it applies;
// Pulumi's Update follows its Diff): for Argo CD's install.yaml behind an
// overlay that is 0.9-1.2 CPU-s a build, where `kubectl apply -k` builds once.
//
// A kept build is taken only when every question it asked the disk (a
// file's bytes, a directory's entries, whether a path exists, a glob) gets
// the same answer now, so an edited, added or removed file builds again.
// A build that wrote to the disk or read it in a way not recorded (Open,
// Walk), and one that inflates Helm charts (the helm CLI reads the chart
// itself), is not kept. A remote resource (an http or git URL) is fetched
// once per process: a cloned repository's files are gone after the build,
// so a git resource builds again; a file fetched over http is taken as the
// plan saw it, which is what the apply of that plan must send.
var built = buildCache{}

// buildCacheBytes bounds the text the kept builds hold: 32 MB, about eight
// of the largest bundles users apply.
const buildCacheBytes = 32 << 20

type buildKey struct {
	dir string // absolute
	k   Kustomize
}

type buildEntry struct {
	key     buildKey
	answers []diskAnswer
	docs    []Document
	size    int
}

type buildCache struct {
	mu sync.Mutex
	// entries, least recently used first.
	entries []*buildEntry
	bytes   int
}

// get returns the documents of a kept build of key whose answers still
// hold on disk.
func (c *buildCache) get(key buildKey, disk filesys.FileSystem) ([]Document, bool) {
	c.mu.Lock()
	i := slices.IndexFunc(c.entries, func(e *buildEntry) bool { return e.key == key })
	if i < 0 {
		c.mu.Unlock()
		return nil, false
	}
	e := c.entries[i]
	c.mu.Unlock()
	for _, a := range e.answers {
		if !a.holds(disk) {
			c.drop(e)
			return nil, false
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.Index(c.entries, e); i >= 0 {
		c.entries = append(slices.Delete(c.entries, i, i+1), e)
	}
	return slices.Clone(e.docs), true
}

// put keeps a build of key, in place of any kept before.
func (c *buildCache) put(key buildKey, answers []diskAnswer, docs []Document) {
	e := &buildEntry{key: key, answers: answers, docs: slices.Clone(docs)}
	for _, d := range docs {
		e.size += len(d.Text)
	}
	if e.size > buildCacheBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.IndexFunc(c.entries, func(o *buildEntry) bool { return o.key == key }); i >= 0 {
		c.bytes -= c.entries[i].size
		c.entries = slices.Delete(c.entries, i, i+1)
	}
	for len(c.entries) > 0 && c.bytes+e.size > buildCacheBytes {
		c.bytes -= c.entries[0].size
		c.entries = c.entries[1:]
	}
	c.entries = append(c.entries, e)
	c.bytes += e.size
}

func (c *buildCache) drop(e *buildEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.Index(c.entries, e); i >= 0 {
		c.bytes -= e.size
		c.entries = slices.Delete(c.entries, i, i+1)
	}
}

// reset drops every kept build: for tests that count builds.
func (c *buildCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries, c.bytes = nil, 0
}

// diskAnswer is one question a build asked the disk and its answer, as
// text: a file's digest, a directory's entries, an error's message.
type diskAnswer struct {
	op, path, answer string
}

// holds reports whether the disk answers the question as it did.
func (a diskAnswer) holds(disk filesys.FileSystem) bool {
	return ask(disk, a.op, a.path) == a.answer
}

// The questions a build asks the disk that a kept build can ask again.
const (
	opReadFile   = "ReadFile"
	opExists     = "Exists"
	opIsDir      = "IsDir"
	opReadDir    = "ReadDir"
	opGlob       = "Glob"
	opCleanedAbs = "CleanedAbs"
)

// ask asks disk the question op of path and returns its answer as text.
func ask(disk filesys.FileSystem, op, path string) string {
	switch op {
	case opReadFile:
		data, err := disk.ReadFile(path)
		return answerOf(err, digestText(data))
	case opExists:
		return boolAnswer(disk.Exists(path))
	case opIsDir:
		return boolAnswer(disk.IsDir(path))
	case opReadDir:
		names, err := disk.ReadDir(path)
		return answerOf(err, names...)
	case opGlob:
		names, err := disk.Glob(path)
		return answerOf(err, names...)
	case opCleanedAbs:
		dir, file, err := disk.CleanedAbs(path)
		return answerOf(err, string(dir), file)
	}
	return "unknown question " + op
}

func digestText(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func boolAnswer(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func answerOf(err error, parts ...string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.Join(parts, "\x00")
}

// recordingFS is the disk as a build sees it, noting each question and its
// answer. A question it cannot note (a write, an Open, a Walk) makes the
// build one not to keep.
type recordingFS struct {
	filesys.FileSystem
	mu         sync.Mutex
	answers    []diskAnswer
	unkeepable bool
}

func (r *recordingFS) note(op, path, answer string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, diskAnswer{op: op, path: path, answer: answer})
}

func (r *recordingFS) notKeepable() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unkeepable = true
}

// recorded returns the answers a build may be kept with, false if it may
// not be kept.
func (r *recordingFS) recorded() ([]diskAnswer, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unkeepable {
		return nil, false
	}
	slices.SortFunc(r.answers, func(a, b diskAnswer) int {
		return strings.Compare(a.op+"\x00"+a.path, b.op+"\x00"+b.path)
	})
	return slices.CompactFunc(r.answers, func(a, b diskAnswer) bool { return a.op == b.op && a.path == b.path }), true
}

func (r *recordingFS) ReadFile(path string) ([]byte, error) {
	data, err := r.FileSystem.ReadFile(path)
	r.note(opReadFile, path, answerOf(err, digestText(data)))
	return data, err
}

func (r *recordingFS) Exists(path string) bool {
	ok := r.FileSystem.Exists(path)
	r.note(opExists, path, boolAnswer(ok))
	return ok
}

func (r *recordingFS) IsDir(path string) bool {
	ok := r.FileSystem.IsDir(path)
	r.note(opIsDir, path, boolAnswer(ok))
	return ok
}

func (r *recordingFS) ReadDir(path string) ([]string, error) {
	names, err := r.FileSystem.ReadDir(path)
	r.note(opReadDir, path, answerOf(err, names...))
	return names, err
}

func (r *recordingFS) Glob(pattern string) ([]string, error) {
	names, err := r.FileSystem.Glob(pattern)
	r.note(opGlob, pattern, answerOf(err, names...))
	return names, err
}

func (r *recordingFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	dir, file, err := r.FileSystem.CleanedAbs(path)
	r.note(opCleanedAbs, path, answerOf(err, string(dir), file))
	return dir, file, err
}

func (r *recordingFS) Open(path string) (filesys.File, error) {
	r.notKeepable()
	return r.FileSystem.Open(path)
}

func (r *recordingFS) Walk(path string, walkFn filepath.WalkFunc) error {
	r.notKeepable()
	return r.FileSystem.Walk(path, walkFn)
}

func (r *recordingFS) Create(path string) (filesys.File, error) {
	r.notKeepable()
	return r.FileSystem.Create(path)
}

func (r *recordingFS) Mkdir(path string) error {
	r.notKeepable()
	return r.FileSystem.Mkdir(path)
}

func (r *recordingFS) MkdirAll(path string) error {
	r.notKeepable()
	return r.FileSystem.MkdirAll(path)
}

func (r *recordingFS) RemoveAll(path string) error {
	r.notKeepable()
	return r.FileSystem.RemoveAll(path)
}

func (r *recordingFS) WriteFile(path string, data []byte) error {
	r.notKeepable()
	return r.FileSystem.WriteFile(path, data)
}
