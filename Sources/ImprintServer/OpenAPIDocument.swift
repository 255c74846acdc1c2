import Foundation

/// The OpenAPI 3.1 description of the API, bundled from `Resources/openapi.json`
/// (a copy of `docs/openapi.json`; a test keeps the two identical).
public enum OpenAPIDocument {
    public static let bytes: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
              let data = try? Data(contentsOf: url)
        else { return Array("{}".utf8) }
        return Array(data)
    }()
}
