// zstd (RFC 8878), for the sink's objects and for timer payloads sent compressed: an encoder and a
// decoder in plain TypeScript over Uint8Array, so the same code runs on Node 20 (whose zlib has no
// zstd) and in workerd (which compiles no WASM from bytes at run time). docs/sink.md describes what the encoder does and leaves out.
export { ZstdWriter, zstdCompress } from './frame-writer.js'
export { ZstdTooLarge, zstdDecompress } from './frame-reader.js'
