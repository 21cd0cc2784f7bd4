package frontier

// hostHeap orders hosts by when the frontier looks at them next, and hosts
// due at the same time by when they were put in it, first come first. It
// implements container/heap.Interface.
type hostHeap []*host

func (q hostHeap) Len() int { return len(q) }

func (q hostHeap) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q hostHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = int32(i)
	q[j].index = int32(j)
}

func (q *hostHeap) Push(x any) {
	h := x.(*host)
	h.index = int32(len(*q))
	*q = append(*q, h)
}

func (q *hostHeap) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	h.index = -1
	*q = old[:len(old)-1]
	return h
}
