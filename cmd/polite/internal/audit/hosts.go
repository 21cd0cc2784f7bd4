package audit

// maxHosts bounds the hosts the audit tells apart; the requests to hosts
// past it are counted, and not judged for gaps and pauses, which are per
// host.
const maxHosts = 100_000

// Host numbers with a meaning of their own.
const (
	noHost        uint32 = 0         // lines that name no host, and every line with Options.OneHost: "-"
	untrackedHost uint32 = 1<<32 - 1 // a host past maxHosts
)

// A hostTable numbers the hosts of the log's lines, by their name as
// hostName gives it: lower-cased, without the port.
type hostTable struct {
	byRaw  map[string]uint32 // as written in the lines
	byName map[string]uint32
	names  []string // by number
	last   []byte   // the last host asked for, and its number: lines come in runs
	lastID uint32
}

func newHostTable() *hostTable {
	return &hostTable{
		byRaw:  make(map[string]uint32),
		byName: make(map[string]uint32),
		names:  []string{"-"},
		lastID: untrackedHost,
	}
}

// id returns the number of the host raw, as written in a line.
func (h *hostTable) id(raw []byte) uint32 {
	if len(raw) == 0 || string(raw) == "-" {
		return noHost
	}
	if h.lastID != untrackedHost && string(raw) == string(h.last) {
		return h.lastID
	}
	id, ok := h.byRaw[string(raw)]
	if !ok {
		name := hostName(raw)
		if id, ok = h.byName[name]; !ok {
			if len(h.names) >= maxHosts {
				return untrackedHost
			}
			id = uint32(len(h.names))
			h.names = append(h.names, name)
			h.byName[name] = id
		}
		if len(h.byRaw) < 2*maxHosts {
			h.byRaw[string(raw)] = id
		}
	}
	h.last, h.lastID = append(h.last[:0], raw...), id
	return id
}

// name returns the host's name, "-" for noHost.
func (h *hostTable) name(id uint32) string {
	if int(id) < len(h.names) {
		return h.names[id]
	}
	return "(other hosts)"
}
