import Crypto
import Foundation

/// The comments a reviewer sends back: the `.imprint-comments` file the viewer downloads in
/// the password form, and (one ``SealedComment`` per zone record) what it posts in the link
/// form. Each comment is encrypted to the owner's comment key, so only the owner reads it:
///
/// 1. the viewer makes an ephemeral P-256 key pair and does ECDH with the owner's key;
/// 2. HKDF-SHA256 over the shared x-coordinate, salt = the snapshot id (UTF-8),
///    info = `imprint-review-comment/1`, gives a 32-byte AES-GCM key;
/// 3. AES-256-GCM seals `JSON(ReviewComment)` with aad = the snapshot id (UTF-8).
///
/// ```json
/// {"format": "imprint-comments/1", "snapshotId": "9f…", "items": [{"epk": "BM…", "iv": "…", "data": "…"}]}
/// ```
public struct ReviewCommentFile: Codable, Sendable, Hashable {
    public static let currentFormat = "imprint-comments/1"
    /// Limits of ``decode(_:)``: file size, items, one item's ciphertext.
    public static let maxFileBytes = 32 << 20
    public static let maxItems = 10_000
    public static let maxItemBytes = 96 << 10

    public var format: String
    public var snapshotId: String
    public var items: [SealedComment]

    /// One comment, sealed to the owner.
    public struct SealedComment: Codable, Sendable, Hashable {
        /// The ephemeral public key, uncompressed point, base64.
        public var epk: String
        public var iv: String
        public var data: String
    }

    public init(snapshotId: String, items: [SealedComment]) {
        self.format = Self.currentFormat
        self.snapshotId = snapshotId
        self.items = items
    }

    /// Decodes a file, checking format and limits; never decrypts.
    public static func decode(_ bytes: [UInt8]) throws(ReviewSnapshotError) -> ReviewCommentFile {
        guard bytes.count <= maxFileBytes else { throw ReviewSnapshotError(.tooLarge, "comment file over \(maxFileBytes) bytes") }
        let file: ReviewCommentFile
        do { file = try JSONDecoder().decode(ReviewCommentFile.self, from: Data(bytes)) } catch {
            throw ReviewSnapshotError(.malformed, "not a comment file: \(error)")
        }
        guard file.format == currentFormat else { throw ReviewSnapshotError(.unsupportedFormat, "comment file format \(file.format.prefix(64))") }
        guard file.items.count <= maxItems else { throw ReviewSnapshotError(.tooLarge, "more than \(maxItems) comments") }
        for item in file.items where item.data.utf8.count > maxItemBytes * 4 / 3 + 4 {
            throw ReviewSnapshotError(.tooLarge, "a comment over \(maxItemBytes) bytes")
        }
        return file
    }

    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(self)) ?? Data())
    }
}

/// Sealing and opening comments with the owner's comment key (see ``ReviewCommentFile``).
public enum CommentSealing {
    static let info = Array("imprint-review-comment/1".utf8)

    /// Seals `comment` to `ownerKey` as the viewer does (used by tests and the demo to play the
    /// reviewer's part without a browser).
    public static func seal(_ comment: ReviewComment, to ownerKey: P256.KeyAgreement.PublicKey) throws(ReviewSnapshotError) -> ReviewCommentFile.SealedComment {
        let ephemeral = P256.KeyAgreement.PrivateKey()
        let key = try derive(ephemeral, ownerKey, snapshotId: comment.snapshotId)
        let json: Data
        do { json = try JSONEncoder().encode(comment) } catch { throw ReviewSnapshotError(.invalidComment, "\(error)") }
        let sealed = try ReviewCipher.seal(Array(json), key: key, aad: Array(comment.snapshotId.utf8))
        return .init(epk: ephemeral.publicKey.x963Representation.base64EncodedString(), iv: sealed.iv, data: sealed.data)
    }

    /// Opens one sealed comment of `snapshotId` with the owner's private comment key and checks
    /// it (``ReviewComment`` limits, the snapshot it names).
    public static func open(_ item: ReviewCommentFile.SealedComment, snapshotId: String,
                            with ownerKey: P256.KeyAgreement.PrivateKey) throws(ReviewSnapshotError) -> ReviewComment {
        guard item.data.utf8.count <= ReviewCommentFile.maxItemBytes * 4 / 3 + 4 else {
            throw ReviewSnapshotError(.tooLarge, "a comment over \(ReviewCommentFile.maxItemBytes) bytes")
        }
        guard let epkBytes = Data(base64Encoded: item.epk), epkBytes.count == 65,
              let epk = try? P256.KeyAgreement.PublicKey(x963Representation: epkBytes) else {
            throw ReviewSnapshotError(.malformed, "bad ephemeral key")
        }
        let key = try derive(ownerKey, epk, snapshotId: snapshotId)
        let plaintext = try ReviewCipher.open(.init(iv: item.iv, data: item.data), key: key, aad: Array(snapshotId.utf8))
        let comment: ReviewComment
        do { comment = try JSONDecoder().decode(ReviewComment.self, from: Data(plaintext)) } catch {
            throw ReviewSnapshotError(.malformed, "decrypted comment is not JSON of a comment: \(error)")
        }
        guard comment.snapshotId == snapshotId else {
            throw ReviewSnapshotError(.wrongSnapshot, "comment names snapshot \(comment.snapshotId.prefix(64)), not \(snapshotId)")
        }
        return try comment.validated()
    }

    static func derive(_ privateKey: P256.KeyAgreement.PrivateKey, _ publicKey: P256.KeyAgreement.PublicKey,
                       snapshotId: String) throws(ReviewSnapshotError) -> SymmetricKey {
        do {
            let shared = try privateKey.sharedSecretFromKeyAgreement(with: publicKey)
            return shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Array(snapshotId.utf8), sharedInfo: info, outputByteCount: 32)
        } catch {
            throw ReviewSnapshotError(.malformed, "key agreement failed: \(error)")
        }
    }
}
