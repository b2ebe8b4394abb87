// The code tables of a sequence (RFC 8878, "Sequence Codes for Lengths and Offsets"): each literal
// length and match length is sent as a code, FSE-coded, plus extra bits read raw; these give each
// code's baseline and its number of extra bits. Shared by the encoder and the decoder.

export const LL_BASELINE = Uint32Array.of(
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
  16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
  8192, 16384, 32768, 65536,
)
export const LL_EXTRA = Uint8Array.of(
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12,
  13, 14, 15, 16,
)

export const ML_BASELINE = Uint32Array.of(
  3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
  19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
  35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
  4099, 8195, 16387, 32771, 65539,
)
export const ML_EXTRA = Uint8Array.of(
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11,
  12, 13, 14, 15, 16,
)

/** The predefined distributions (RFC 8878 3.1.1.3.2.2): -1 is a "less than 1" probability. */
export const LL_DEFAULT = Int16Array.of(
  4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
  2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
  -1, -1, -1, -1,
)
export const LL_DEFAULT_LOG = 6
export const ML_DEFAULT = Int16Array.of(
  1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1,
  -1, -1, -1, -1, -1,
)
export const ML_DEFAULT_LOG = 6
export const OF_DEFAULT = Int16Array.of(
  1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1,
)
export const OF_DEFAULT_LOG = 5

/** Index of the highest set bit of a positive 32-bit value. */
export const highBit = (value: number) => 31 - Math.clz32(value)

// Small lengths by lookup; past the lookup every code covers one power of two.
const LL_LOOKUP = new Uint8Array(64)
const ML_LOOKUP = new Uint8Array(128)
for (let code = 0; code < LL_BASELINE.length; code++) {
  for (let v = LL_BASELINE[code]!; v < LL_BASELINE[code]! + (1 << LL_EXTRA[code]!) && v < 64; v++) LL_LOOKUP[v] = code
}
for (let code = 0; code < ML_BASELINE.length; code++) {
  for (let v = ML_BASELINE[code]! - 3; v < ML_BASELINE[code]! - 3 + (1 << ML_EXTRA[code]!) && v < 128; v++) ML_LOOKUP[v] = code
}

export const literalLengthCode = (length: number) => (length < 64 ? LL_LOOKUP[length]! : highBit(length) + 19)
export const matchLengthCode = (length: number) => {
  const base = length - 3
  return base < 128 ? ML_LOOKUP[base]! : highBit(base) + 36
}
