import Foundation
import ImprintDelivery

/// How both stores keep a member's `StorageProvider`: as wire JSON text in
/// `storage_providers.provider`. Every `sendMessage` answers with each recipient's provider,
/// so decoding is memoized by the JSON text (a pure function of it: no invalidation needed
/// when a member registers something else, the new text is simply a new key).
enum StoredStorageProvider {
    private static let decoded = BoundedCache<String, StorageProvider>(capacity: 4096)

    static func encode(_ provider: StorageProvider) throws -> String {
        String(decoding: try WireJSON.encoder().encode(provider), as: UTF8.self)
    }

    /// The provider stored as `json`; the default when there is none or it does not decode.
    static func decode(_ json: String?) -> StorageProvider {
        guard let json else { return .defaultProvider }
        return decoded.value(for: json) {
            (try? WireJSON.decoder().decode(StorageProvider.self, from: Data(json.utf8))) ?? .defaultProvider
        }
    }
}
