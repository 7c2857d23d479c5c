package savedir

// EncodeV1 encodes m as a manifest of format version 1 (no chunk store
// root, no data files), the way saves were written before roots existed.
func EncodeV1(m *Manifest) []byte {
	c := *m
	c.Version = manifestVersion1
	c.Chunks.Root, c.Chunks.Data = nil, nil
	return c.encode()
}

// SetProgressHook makes w call fn with every progress value it publishes,
// in order. Set it before the first Submit.
func SetProgressHook(w *Writer, fn func(float32)) { w.onProgress = fn }
