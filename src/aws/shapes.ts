// How a member of an AWS structure is laid out on the Query/XML protocol, where the JSON protocol
// simply nests. One table per service describes both directions: decoding a Query form into the
// JSON shape (./query-decode.ts) and writing a JSON-shaped answer as XML (./xml.ts), so an action
// is written once, against the JSON shape.
//
// Lists are flattened (`Attribute.1.Name` / repeated `<Attribute>`, SQS) or wrapped in `member`
// (`Tags.member.1.Key` / `<Tags><member>`, SNS); maps are lists of key/value pairs, flattened (SQS)
// or wrapped in `entry` (SNS).

export type Shape = ListShape | MapShape

export interface ListShape {
  kind: 'list'
  /** The JSON member when it is not the table's key (several Query names decode into one member). */
  json?: string
  /** The Query/XML name of the member (`Attribute`, `SendMessageBatchRequestEntry`, `Tags`). */
  query: string
  /** Flattened: each item is `<query>.N`; otherwise `<query>.member.N`. */
  flat: boolean
  /** Shapes of the members of a structure item. */
  items?: Shapes
}

export interface MapShape {
  kind: 'map'
  /** The JSON member when it is not the table's key (several Query names decode into one member). */
  json?: string
  query: string
  flat: boolean
  /** The names of the pair's parts (`Name`/`Value` in SQS, `key`/`value` in SNS). */
  key: string
  value: string
  /** Shapes of the members of a structure value (message attribute values). */
  values?: Shapes
}

/** JSON member name → its Query/XML layout. Members not listed are scalars or plain structures. */
export type Shapes = Record<string, Shape>
