import Crypto
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintDelivery
import ImprintEncoding
import ImprintStore

/// Exports a document as a reviewer snapshot: ``ReviewContent`` at the chosen heads,
/// compressed with raw DEFLATE, sealed with AES-256-GCM under a fresh random key (never a
/// group key), and wrapped in one self-contained HTML viewer (`ViewerPage`, in ImprintReviewViewer).
///
/// ```swift
/// let commentKey = P256.KeyAgreement.PrivateKey()   // keep it: it reads the comments
/// let snapshot = try ReviewExport.export(bundle, options: .init(password: "correct horse", commentKey: commentKey.publicKey))
/// try snapshot.html.write(toFile: "review.html", atomically: true, encoding: .utf8)
/// ```
public enum ReviewExport {
    public struct Options: Sendable {
        /// The version to export (nil: the current one).
        public var heads: [ChangeHash]?
        /// The password form's password; nil for the link form (the key goes into the link).
        public var password: String?
        public var iterations: Int
        public var expires: Date?
        /// The owner's comment key (its private half stays with the owner).
        public var commentKey: P256.KeyAgreement.PublicKey
        public var snapshotId: String
        /// The link form's server and zone (nil for the password form).
        public var link: ReviewEnvelope.LinkSource?
        /// Inline images up to this many bytes in all; larger ones are left out (named in
        /// ``ExportedReviewSnapshot/warnings``).
        public var assetBudget: Int

        public init(heads: [ChangeHash]? = nil, password: String? = nil, iterations: Int = ReviewEnvelope.minimumIterations,
                    expires: Date? = nil, commentKey: P256.KeyAgreement.PublicKey,
                    snapshotId: String = ReviewExport.newSnapshotId(), link: ReviewEnvelope.LinkSource? = nil,
                    assetBudget: Int = 48 << 20) {
            self.heads = heads
            self.password = password
            self.iterations = iterations
            self.expires = expires
            self.commentKey = commentKey
            self.snapshotId = snapshotId
            self.link = link
            self.assetBudget = assetBudget
        }
    }

    /// 128 random bits, hex.
    public static func newSnapshotId() -> String {
        Hex.encode(ReviewCipher.randomBytes(16))
    }

    public static func export(_ bundle: DocumentBundle, options: Options) throws -> ExportedReviewSnapshot {
        if let password = options.password, password.isEmpty {
            throw ReviewSnapshotError(.invalidArgument, "the password is empty")
        }
        var warnings: [String] = []
        let content = try self.content(of: bundle, options: options, warnings: &warnings)
        let json = try JSONEncoder().encode(content)
        let packed = try RawDeflate.compress(Array(json))
        let contentKey = SymmetricKey(size: .bits256)
        let aad = ReviewEnvelope.associatedData(snapshotId: options.snapshotId)
        var envelope = ReviewEnvelope(format: ReviewEnvelope.currentFormat, snapshotId: options.snapshotId,
                                      payload: try ReviewCipher.seal(packed, key: contentKey, aad: aad),
                                      password: nil, link: options.link)
        if let password = options.password {
            let salt = ReviewCipher.randomBytes(16)
            let wrapping = try ReviewCipher.passwordKey(password, salt: salt, iterations: options.iterations)
            let raw = contentKey.withUnsafeBytes { Array($0) }
            envelope.password = .init(kdf: "PBKDF2-SHA256", iterations: options.iterations,
                                      salt: Data(salt).base64EncodedString(),
                                      wrappedKey: try ReviewCipher.seal(raw, key: wrapping, aad: aad))
        }
        return ExportedReviewSnapshot(snapshotId: options.snapshotId, envelope: envelope, contentKey: contentKey,
                                      content: content, plaintextBytes: json.count, warnings: warnings)
    }

    static func content(of bundle: DocumentBundle, options: Options, warnings: inout [String]) throws -> ReviewContent {
        let document = try options.heads.map { try bundle.document.fork(at: $0) } ?? bundle.document
        let body = try DocumentSchema.body(of: document)
        let text = try document.text(body)

        let anchors = ReviewAnchors(try document.cursorRuns(body))

        let comments = try DocumentComment.all(in: document, body: body).map {
            ReviewContent.Comment(id: $0.id, author: $0.author, text: $0.text, start: $0.range?.lowerBound,
                                  end: $0.range?.upperBound, quote: $0.quote, resolved: $0.resolved,
                                  createdAt: $0.createdAt, inReplyTo: $0.target)
        }

        var assets: [ReviewContent.Asset] = []
        var budget = options.assetBudget
        let named = Set(ImageReferences.targets(in: text))
        for key in try document.keys(.root) where key.hasPrefix(DocumentSchema.assetKeyPrefix) {
            let hex = String(key.dropFirst(DocumentSchema.assetKeyPrefix.count))
            let name = try document.get(.root, key)?.string ?? ""
            guard named.contains(name) || named.contains(hex) || named.contains("assets/" + hex) else { continue }
            guard let id = try? AssetID(hex: hex), bundle.store.assets.contains(id) else {
                warnings.append("image \(name) (\(hex.prefix(12))) is not in assets/ yet; left out")
                continue
            }
            let size = Int(try bundle.store.assets.size(of: id))
            guard size <= budget else {
                warnings.append("image \(name) (\(size) bytes) is over the snapshot's image budget; left out")
                continue
            }
            var bytes: [UInt8] = []
            try bundle.store.assets.read(id) { bytes.append(contentsOf: $0) }
            guard let mime = ImageReferences.mimeType(of: bytes) else {
                warnings.append("asset \(name) is not a PNG, JPEG, GIF or WebP image; left out")
                continue
            }
            budget -= size
            assets.append(.init(name: name, hash: hex, mime: mime, data: Data(bytes).base64EncodedString()))
        }

        let heads = options.heads.map { try? bundle.document.heads(of: $0) } ?? document.currentHeads
        return ReviewContent(
            format: ReviewContent.currentFormat, snapshotId: options.snapshotId, documentId: bundle.metadata.documentID,
            title: (try document.get(.root, DocumentSchema.titleKey))?.string ?? bundle.metadata.title,
            body: text, heads: (heads ?? document.currentHeads).map(\.hex),
            exportedAt: RFC3339.string(from: Date()), expires: options.expires.map { RFC3339.string(from: $0) },
            anchors: anchors, comments: comments, assets: assets,
            commentKey: options.commentKey.x963Representation.base64EncodedString())
    }
}

/// An exported snapshot: the viewer page and what the owner keeps.
public struct ExportedReviewSnapshot: Sendable {
    public var snapshotId: String
    public var envelope: ReviewEnvelope
    /// The content key (the link form puts it in the link's fragment).
    public var contentKey: SymmetricKey
    public var content: ReviewContent
    /// Size of the content's JSON before compression.
    public var plaintextBytes: Int
    public var warnings: [String]

    /// The self-contained viewer page. The link form's page carries no ciphertext: it
    /// fetches the snapshot with the link, so revoking or expiring the link closes the file too.
    public var html: String {
        var page = envelope
        if page.link != nil { page.payload = nil }
        return ViewerPage.html(envelope: page)
    }

    /// The content key, base64url without padding (the link's fragment form).
    public var contentKeyText: String {
        contentKey.withUnsafeBytes { Data($0) }.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
