//go:build amd64 && !purego

package redact

// filter_amd64.s tests the 2-byte spellings in four unrolled slots.
var (
	_ [shortSlots - 4]struct{}
	_ [4 - shortSlots]struct{}
)

// filterBlocks tests blocks of 64 positions of text[:n] from i on, as
// filterTables says, while a block and the 3 bytes after it are in
// text[:n], at most blocksPerCall blocks: masks[5b] marks the positions
// of block b where a keyword of 3 bytes or more may start, masks[5b+1+s]
// those where 2-byte spelling s starts. It returns the blocks tested and
// where the next would start.
//
//go:noescape
func filterBlocks(text *byte, i, n int, t *filterTables, masks *[blocksPerCall * (1 + shortSlots)]uint64) (nb, next int)

// unescapeBlocks copies src[:n] to dst rewriting the escapes \n, \t, \r,
// \b and \f as unescapeView does; flags has bit 0 set when an escaped 'u'
// occurs (the copy is then not the view: the caller makes it with
// unescapeView), bit 1 when an escaped '/' does.
//
//go:noescape
func unescapeBlocks(src, dst *byte, n int) (flags int)
