import ImprintMLS

/// The body of an `admins` payload: the DIDs that may add and remove members, the document's
/// sharer (its convo's creator) first, sent in the group by the sharer when it names admins
/// (``SharedDocument/setAdmins(_:)``). Members take it only from the sharer; snapshots carry
/// the same list to joiners (`SnapshotContent.admins`).
///
/// Layout: `opaque admins<V>`, a vector of `opaque did<V>`.
struct AdminList: Sendable, Hashable {
    var admins: [String]

    func encoded() -> [UInt8] {
        var w = TLSWriter(capacity: 64 * admins.count + 8)
        w.writeStrings(admins)
        return w.bytes
    }

    /// Throws ``SyncError`` (`.invalidPayload`) for bytes of another layout or an empty list.
    init(decoding bytes: [UInt8]) throws(SyncError) {
        admins = try TLSReader.body(bytes, of: "admin list") { r in try r.readStrings(of: "an admin list") }
        guard !admins.isEmpty else { throw SyncError(.invalidPayload, "an empty admin list") }
    }

    init(admins: [String]) {
        self.admins = admins
    }
}
