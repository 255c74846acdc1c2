import ImprintBundle
import ImprintCRDT

extension DocumentBundle {
    /// Stores a file as a content-addressed asset (streamed, deduplicated) and references it
    /// from the document as root key `asset:<sha256 hex>` = its file name, in one durable
    /// change. Flat keys, not a nested map: two devices adding assets concurrently never race
    /// to create a shared container object.
    @discardableResult
    public func addAsset(contentsOf path: String, name: String) throws(StoreError) -> AssetID {
        let id = try StoreError.wrapping { try store.assets.add(contentsOf: path) }
        try change(message: "asset \(name)") { tx, _ in
            try tx.put(.root, DocumentSchema.assetKey(id.hex), .scalar(.string(name)))
        }
        return id
    }

    /// The assets the document references: id hex → file name.
    public func assetReferences() throws(StoreError) -> [String: String] {
        try StoreError.wrapping {
            var out: [String: String] = [:]
            for key in try document.keys(.root) where key.hasPrefix(DocumentSchema.assetKeyPrefix) {
                out[String(key.dropFirst(DocumentSchema.assetKeyPrefix.count))] = try document.get(.root, key)?.string ?? ""
            }
            return out
        }
    }

    /// Drops the document's reference to an asset, then deletes the asset's file if nothing
    /// references it any more. Returns whether a reference existed.
    @discardableResult
    public func removeAsset(_ id: AssetID) throws(StoreError) -> Bool {
        let key = DocumentSchema.assetKey(id.hex)
        let referenced = try StoreError.wrapping { try document.get(.root, key) != nil }
        if referenced {
            try change(message: "remove asset") { tx, _ in try tx.delete(.root, key) }
        }
        let stillReferenced = try assetReferences()[id.hex] != nil
        if !stillReferenced { _ = try StoreError.wrapping { try store.removeUnreferencedAssets([id]) } }
        return referenced
    }
}
