package pipeline

import "time"

// landMarkers lands a batch's transaction markers (the commit and abort
// control records a transactional producer's transactions end with; the
// group client fetches them with kgo.KeepControlRecords). They carry no
// effect, so they are known as soon as they are read: the commit point moves
// past a marker, and past the aborted records before it that read_committed
// never delivers, once every record before it has landed. Without them the
// commit point would stop on the last marker of a partition, and a partition
// ending in a transaction would never be committed to its end.
func (w *worker) landMarkers(offsets []int64) error {
	if len(offsets) == 0 {
		return nil
	}
	now := time.Now()
	for _, o := range offsets {
		if err := w.e.landMarker(o, now); err != nil {
			return err
		}
	}
	point := w.e.tr.CommitPoint()
	w.p.stats.update(w.part, func(s *PartitionStats) { s.Landed = point })
	return nil
}
