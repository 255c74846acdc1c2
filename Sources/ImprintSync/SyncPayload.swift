import ImprintCRDT
import ImprintMLS

/// What one encrypted record carries, before MLS encryption: a kind, its body, and zero
/// padding up to a size bucket, so that the ciphertext's length tells the servers little
/// about how much was typed.
///
/// Layout (TLS presentation language, docs/sync.md): `"IMS"`, version `1`, kind
/// (`uint8`), body (`opaque<V>`), then zeros to the bucket. Buckets: at least 256 bytes,
/// powers of two up to 1 MiB, whole MiB above. A change set and a snapshot look alike to
/// the servers: all three travel as `change` records.
struct SyncPayload: Sendable, Hashable {
    enum Kind: UInt8, Sendable {
        /// A change set (`ChangeSet` bytes).
        case changes = 1
        /// A whole document for members who joined in this epoch (`SnapshotContent`).
        case snapshot = 2
        /// Assets shared with the group: where their records are and their keys
        /// (`AttachmentAnnouncement`).
        case assets = 3
        /// A member asks for the changes it lacks (`MissingChangesRequest`).
        case syncRequest = 4
        /// The answer with those changes (`MissingChangesAnswer`).
        case syncReply = 5
        /// The sharer names the admins (`AdminList`).
        case admins = 6
    }

    static let magic: [UInt8] = Array("IMS".utf8) + [1]

    var kind: Kind
    var body: [UInt8]

    /// The padded plaintext.
    func encoded() -> [UInt8] {
        var w = TLSWriter(capacity: body.count + 16)
        w.writeBytes(Self.magic)
        w.writeUInt8(kind.rawValue)
        w.writeOpaque(body)
        var bytes = w.bytes
        bytes.append(contentsOf: repeatElement(0, count: Self.bucket(for: bytes.count) - bytes.count))
        return bytes
    }

    /// The smallest bucket that holds `size` bytes.
    static func bucket(for size: Int) -> Int {
        let mib = 1 << 20
        if size > mib { return (size + mib - 1) / mib * mib }
        var bucket = 256
        while bucket < size { bucket <<= 1 }
        return bucket
    }

    /// The kind byte of `bytes` when they are a payload of a kind this version does not know
    /// (one a newer member sent), else nil. Such a message is skipped, not an error: it is
    /// authenticated and in order, only not for this version.
    static func unknownKind(in bytes: [UInt8]) -> UInt8? {
        guard bytes.count > magic.count, Array(bytes.prefix(magic.count)) == magic else { return nil }
        let raw = bytes[magic.count]
        return Kind(rawValue: raw) == nil ? raw : nil
    }

    /// Decodes a decrypted payload. Throws ``SyncError/Code/invalidPayload`` for anything but
    /// this layout (unknown kind, truncated, non-zero padding).
    init(decoding bytes: [UInt8]) throws(SyncError) {
        do {
            var r = TLSReader(bytes)
            guard try r.readBytes(4) == Self.magic else { throw SyncError(.invalidPayload, "not an Imprint sync payload") }
            let raw = try r.readUInt8()
            guard let kind = Kind(rawValue: raw) else { throw SyncError(.invalidPayload, "unknown payload kind \(raw)") }
            self.kind = kind
            body = try r.readOpaque()
            guard try r.readBytes(r.remaining).allSatisfy({ $0 == 0 }) else {
                throw SyncError(.invalidPayload, "non-zero padding")
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.invalidPayload, "malformed payload: \(error)")
        }
    }

    init(kind: Kind, body: [UInt8]) {
        self.kind = kind
        self.body = body
    }
}

/// The body of a snapshot payload: the document as whoever committed an Add saw it, for
/// members who cannot decrypt anything older than the epoch they joined in.
struct SnapshotContent: Sendable, Hashable {
    /// The bundle's document id (metadata.json), so every member's bundle names one document.
    var documentID: String
    /// The DIDs that may add and remove members (group policy; the sharer first).
    var admins: [String]
    /// The heads the snapshot holds.
    var heads: [ChangeHash]
    /// `Document.save()` of the document at `heads`.
    var document: [UInt8]
    /// The document's mailbox threshold (`MailboxPolicy`), when the sharer set one.
    var mailboxThreshold: Int?
    /// Whether the document's snapshots give joiners its current state only
    /// (`Document.save(history: .redacted)`: no deleted text), as its sharer chose.
    var currentStateOnly = false

    /// Optional fields follow the document, each only when a later one or itself is set, so
    /// snapshots of documents without them read as before: `uint32 mailbox_threshold`
    /// (`0xFFFFFFFF` for none), then `uint8 current_state_only` (1).
    static let noThreshold = UInt32.max

    var encoded: [UInt8] {
        var w = TLSWriter(capacity: document.count + 256)
        w.writeString(documentID)
        w.writeStrings(admins)
        w.writeVector(heads) { w, head in w.writeOpaque(head.bytes) }
        w.writeOpaque(document)
        if mailboxThreshold != nil || currentStateOnly {
            w.writeUInt32(mailboxThreshold.map { min(UInt32(clamping: $0), Self.noThreshold - 1) } ?? Self.noThreshold)
        }
        if currentStateOnly { w.writeUInt8(1) }
        return w.bytes
    }

    init(documentID: String, admins: [String], heads: [ChangeHash], document: [UInt8], mailboxThreshold: Int? = nil,
         currentStateOnly: Bool = false) {
        self.documentID = documentID
        self.admins = admins
        self.heads = heads
        self.document = document
        self.mailboxThreshold = mailboxThreshold
        self.currentStateOnly = currentStateOnly
    }

    init(decoding bytes: [UInt8]) throws(SyncError) {
        do {
            var r = TLSReader(bytes)
            documentID = try r.readString(of: "a snapshot")
            admins = try r.readStrings(of: "a snapshot")
            heads = try r.readVector { r in
                guard let head = ChangeHash(bytes: try r.readOpaque()) else { throw SyncError(.invalidPayload, "bad head") }
                return head
            }
            document = try r.readOpaque()
            if !r.isAtEnd {
                let threshold = try r.readUInt32()
                mailboxThreshold = threshold == Self.noThreshold ? nil : Int(threshold)
            }
            if !r.isAtEnd {
                let flag = try r.readUInt8()
                guard flag == 1 else { throw SyncError(.invalidPayload, "a snapshot's current-state flag is \(flag)") }
                currentStateOnly = true
            }
            try r.finish()
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.invalidPayload, "malformed snapshot: \(error)")
        }
    }
}
