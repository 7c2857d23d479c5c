package autosave

// EncodeV1 encodes m as a manifest of format version 1 (no chunk store
// root), the way saves were written before roots existed.
func EncodeV1(m *Manifest) []byte {
	c := *m
	c.Version = manifestVersion1
	c.Chunks.Root = nil
	return c.encode()
}
