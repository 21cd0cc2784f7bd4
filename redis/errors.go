package politeredis

import "errors"

// ErrUnreachable is matched, through errors.Is, by the errors of a
// Frontier's calls that Redis did not answer.
var ErrUnreachable = errors.New("politeredis: redis unreachable")
