import ImprintCRDT

/// The shape of an Imprint document inside a bundle (docs/document-schema.md): a root map
/// holding `body` (the text object every edit targets), `title`, `schema`, and any number of
/// free-form metadata keys set by users.
public enum DocumentSchema {
    /// Root key of the body text object.
    public static let bodyKey = "body"
    /// Root key of the human title (mirrored into metadata.json).
    public static let titleKey = "title"
    /// Root key holding the schema version number.
    public static let schemaKey = "schema"
    /// The schema version this build writes.
    public static let version: Int64 = 1
    /// Keys users cannot overwrite with a scalar through `set`.
    public static let reservedKeys: Set<String> = [bodyKey, schemaKey]
    /// Root keys `asset:<sha256 hex>` reference assets; the value is the file name.
    public static let assetKeyPrefix = "asset:"
    public static func assetKey(_ hex: String) -> String { assetKeyPrefix + hex }
    /// Root keys `comment:<id>` hold comments (a map each; docs/document-schema.md). Flat root
    /// keys, like assets, so comments imported on two devices never race to create a container.
    public static let commentKeyPrefix = "comment:"
    public static func commentKey(_ id: String) -> String { commentKeyPrefix + id }

    /// The body text object of `document`. Missing: `.incomplete` (the creating change has not
    /// arrived yet); present but not a text object: `.corrupt`.
    public static func body(of document: Document) throws(StoreError) -> ObjectID {
        let value = try StoreError.wrapping { try document.get(.root, bodyKey) }
        switch value {
        case .object(let id, .text)?: return id
        case nil: throw .incomplete("the document has no body yet (its creating change has not arrived)")
        default: throw .corrupt("the document's \(bodyKey) is not a text object", path: nil)
        }
    }
}
