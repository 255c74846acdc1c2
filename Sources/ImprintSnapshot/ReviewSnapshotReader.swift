import Crypto
import Foundation

/// Reads a reviewer snapshot back in Swift, with the same checks as the viewer: what the
/// owner's tools (and the tests) use to verify an export, and a decoder for hostile files.
///
/// ```swift
/// let envelope = try ReviewSnapshotReader.envelope(inHTML: bytes)
/// let content = try ReviewSnapshotReader.open(envelope, password: "correct horse")
/// ```
public enum ReviewSnapshotReader {
    /// Limits: the HTML file, the envelope JSON, the inflated content.
    public static let maxFileBytes = 768 << 20
    public static let maxContentBytes = 512 << 20

    static let openTag = Array(#"<script type="application/json" id="imprint-envelope">"#.utf8)
    static let closeTag = Array("</script>".utf8)

    /// The envelope embedded in a viewer page.
    public static func envelope(inHTML bytes: [UInt8]) throws(ReviewSnapshotError) -> ReviewEnvelope {
        guard bytes.count <= maxFileBytes else { throw ReviewSnapshotError(.tooLarge, "file over \(maxFileBytes) bytes") }
        guard let start = bytes.firstRange(of: openTag)?.upperBound,
              let end = bytes[start...].firstRange(of: closeTag)?.lowerBound else {
            throw ReviewSnapshotError(.malformed, "not an Imprint review copy (no envelope)")
        }
        return try envelope(json: Array(bytes[start..<end]))
    }

    /// An envelope from its JSON (a link's zone record holds exactly this).
    public static func envelope(json: [UInt8]) throws(ReviewSnapshotError) -> ReviewEnvelope {
        guard json.count <= maxFileBytes else { throw ReviewSnapshotError(.tooLarge, "envelope over \(maxFileBytes) bytes") }
        let envelope: ReviewEnvelope
        do { envelope = try JSONDecoder().decode(ReviewEnvelope.self, from: Data(json)) } catch {
            throw ReviewSnapshotError(.malformed, "envelope: \(error)")
        }
        guard envelope.format == ReviewEnvelope.currentFormat else {
            throw ReviewSnapshotError(.unsupportedFormat, "format \(envelope.format.prefix(64))")
        }
        guard envelope.snapshotId.count == 32, envelope.snapshotId.allSatisfy(\.isHexDigit) else {
            throw ReviewSnapshotError(.malformed, "snapshot id")
        }
        return envelope
    }

    /// Unwraps the content key with `password` (`.wrongPassword` if it does not) and opens.
    public static func open(_ envelope: ReviewEnvelope, password: String) throws(ReviewSnapshotError) -> ReviewContent {
        guard let wrap = envelope.password else { throw ReviewSnapshotError(.invalidArgument, "not a password-form snapshot") }
        guard wrap.kdf == "PBKDF2-SHA256" else { throw ReviewSnapshotError(.unsupportedFormat, "kdf \(wrap.kdf.prefix(32))") }
        guard let salt = Data(base64Encoded: wrap.salt), salt.count >= 16, salt.count <= 64 else {
            throw ReviewSnapshotError(.malformed, "salt")
        }
        let wrapping = try ReviewCipher.passwordKey(password, salt: Array(salt), iterations: wrap.iterations)
        let aad = ReviewEnvelope.associatedData(snapshotId: envelope.snapshotId)
        let raw: [UInt8]
        do { raw = try ReviewCipher.open(wrap.wrappedKey, key: wrapping, aad: aad) } catch where error.code == .decryptionFailed {
            throw ReviewSnapshotError(.wrongPassword, "the password does not open this snapshot")
        }
        guard raw.count == 32 else { throw ReviewSnapshotError(.malformed, "content key size") }
        return try open(envelope, key: SymmetricKey(data: raw))
    }

    /// Opens the payload with the content key (the link form's fragment).
    public static func open(_ envelope: ReviewEnvelope, key: SymmetricKey) throws(ReviewSnapshotError) -> ReviewContent {
        guard let payload = envelope.payload else { throw ReviewSnapshotError(.malformed, "no payload") }
        let packed = try ReviewCipher.open(payload, key: key, aad: ReviewEnvelope.associatedData(snapshotId: envelope.snapshotId))
        let json = try RawDeflate.decompress(packed, limit: maxContentBytes)
        let content: ReviewContent
        do { content = try JSONDecoder().decode(ReviewContent.self, from: Data(json)) } catch {
            throw ReviewSnapshotError(.malformed, "content: \(error)")
        }
        guard content.format == ReviewContent.currentFormat else { throw ReviewSnapshotError(.unsupportedFormat, "content format") }
        guard content.snapshotId == envelope.snapshotId else { throw ReviewSnapshotError(.wrongSnapshot, "content of another snapshot") }
        return content
    }
}
