// Package chunkstore is the single-file chunk store (PXSW).
package chunkstore
