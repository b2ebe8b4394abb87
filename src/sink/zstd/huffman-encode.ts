// Huffman-coded literals: not yet written; every literals section is raw or RLE until then.
export function huffmanLiterals(_literals: Uint8Array): Uint8Array | null {
  return null
}
