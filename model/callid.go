package model

import "strconv"

// MaxCallIDLen is the longest tool-call id UniqueCallIDs makes: OpenAI's
// API refuses longer ones.
const MaxCallIDLen = 40

// UniqueCallIDs gives every tool call in blocks an id of its own. A server
// that sends two calls with one id (a bug seen in OpenAI-compatible
// servers) would otherwise have both run and their two results sent back
// under one id, which the next request is refused for. The first call keeps
// its id; each later one with an id already used becomes ID_2, ID_3, … (the
// first free one, the id shortened to fit MaxCallIDLen), the same on every
// run. The new id is the call's id from then on: the assistant message sent
// back carries it as well as its result, so the conversation stays
// consistent for any server. It returns the calls renamed, as old and new
// ids in order.
func UniqueCallIDs(blocks []Block) (renamed [][2]string) {
	used := map[string]bool{}
	for _, b := range blocks {
		if b.Kind == KindToolCall && b.Call != nil {
			used[b.Call.ID] = false // known, not yet taken
		}
	}
	for i := range blocks {
		c := blocks[i].Call
		if blocks[i].Kind != KindToolCall || c == nil {
			continue
		}
		if !used[c.ID] {
			used[c.ID] = true
			continue
		}
		var id string
		for n := 2; ; n++ {
			suffix := "_" + strconv.Itoa(n)
			base := c.ID
			if len(base)+len(suffix) > MaxCallIDLen {
				base = base[:max(MaxCallIDLen-len(suffix), 0)]
			}
			id = base + suffix
			if _, taken := used[id]; !taken {
				break
			}
		}
		used[id] = true
		renamed = append(renamed, [2]string{c.ID, id})
		cp := *c
		cp.ID = id
		blocks[i].Call = &cp
	}
	return renamed
}
