package thinkingml

// block is one of the four top-level blocks of specs/000 §1, numbered in
// their required order.
type block uint8

const (
	blockThink block = iota + 1
	blockSerp
	blockThinking
	blockFinal
	numBlocks
)

var blockNames = [numBlocks]string{blockThink: "think", blockSerp: "serp", blockThinking: "thinking", blockFinal: "final"}

// document is what the parser knows of the reply as a whole: which blocks
// and phases it has seen, for the order and presence checks of specs/000
// §1–§5.
type document struct {
	seen     [numBlocks]bool
	maxBlock block

	// lastID is the id of the latest phase. small (ids below smallIDs)
	// and ids (larger ids, at most maxIDs of them) are the ids used so far,
	// for duplicate_phase_id: a lookup is O(1) for every id a model
	// plausibly writes, so phase count never makes the scan quadratic.
	lastID     int
	small      [smallIDs / 64]uint64
	ids        []int
	realPhases int

	// reportedThinking and reportedPhase say missing_thinking and
	// missing_phase were reported (at <final>), so Close does not repeat
	// them.
	reportedThinking, reportedPhase bool
}

// smallIDs is the bound below which phase ids are kept in a bitset; maxIDs
// bounds how many larger ids are remembered for duplicate detection.
const (
	smallIDs = 4096
	maxIDs   = 64
)

// open records that b begins and returns the violation code it earns:
// duplicate_block for a second one, block_order for one out of order.
func (d *document) open(b block) string {
	code := ""
	switch {
	case d.seen[b]:
		code = CodeDuplicateBlock
	case b < d.maxBlock:
		code = CodeBlockOrder
	}
	d.seen[b] = true
	d.maxBlock = max(d.maxBlock, b)
	return code
}

// usedID reports whether phase id was used before, and records it.
func (d *document) usedID(id int) bool {
	if id < smallIDs {
		w, bit := id/64, uint64(1)<<(id%64)
		used := d.small[w]&bit != 0
		d.small[w] |= bit
		return used
	}
	for _, x := range d.ids {
		if x == id {
			return true
		}
	}
	if len(d.ids) < maxIDs {
		d.ids = append(d.ids, id)
	}
	return false
}
