package politeredis

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// A Pacer renews the leases of its requests in flight (see renewer), so
// that the lease duration bounds how long a dead process holds a host's
// slots, not how long a request may take.

// renewLeaseLua extends leases of a key whose requests still run to the
// lease duration from now. A lease that has expired, or been given back,
// is not brought back.
//
// ARGV after the first: the ids of the leases. It returns {0, 0, 0}.
const renewLeaseLua = stateLua + `
return run(function()
  if L then
    for i = 1, #L, 2 do
      for j = 2, NARG do
        if L[i] == ARGV[j] and L[i + 1] > now then L[i + 1] = now + LEASE end
      end
    end
  end
  local K, _, last = live()
  L = K
  save(last)
  return {0, 0, 0}
end, true)
`

// A leaseRef names a lease that a request of this process holds.
type leaseRef struct{ key, id string }

// A keeper renews the leases of a Pacer's requests in flight.
type keeper struct {
	*renewer[leaseRef]
	script *redis.Script // renewLeaseLua, for the Pacer's policy and lease duration
}

// newKeeper returns the keeper of p's leases.
func newKeeper(p *pacer) *keeper {
	k := &keeper{script: redis.NewScript(scriptHead(p.policies.Policy, p.o.lease) + renewLeaseLua)}
	k.renewer = newRenewer(p.o.lease, func(batch []leaseRef) { k.renewAll(p, batch) })
	return k
}

// renewAll renews the leases of batch, in one pipeline to each server
// that is not known to be down. A server that fails is judged as any
// call judges it; its leases may run out.
func (k *keeper) renewAll(p *pacer, batch []leaseRef) {
	ids := make(map[string][]string)
	for _, l := range batch {
		ids[l.key] = append(ids[l.key], l.id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.o.timeout)
	defer cancel()
	var calls []*call
	var hs []*health // found before the calls, which may make a Cluster reload its map
	for key, list := range ids {
		c, h := p.call(ctx, k.script, key, list...)
		if h.isDown.Load() {
			continue
		}
		calls = append(calls, c)
		hs = append(hs, h)
	}
	if len(calls) == 0 {
		return
	}
	runAll(ctx, p.client, calls)
	for i, c := range calls {
		if err := c.cmd.Err(); err != nil {
			if !p.o.failClose {
				hs[i].failed(err)
			}
			continue
		}
		hs[i].answered()
	}
}
