import Foundation
import HTTPTypes
import Hummingbird
import ImprintDelivery
import NIOCore
import NIOFoundationCompat

/// A 200 JSON response in the wire conventions.
package func json<Output: Encodable>(_ output: Output) throws -> Response {
    json(body: ByteBuffer(data: try WireJSON.encoder().encode(output)))
}

/// A 200 response carrying wire JSON already written (by `WireJSONWriter`).
package func json(bytes: [UInt8]) -> Response {
    json(body: ByteBuffer(bytes: bytes))
}

private func json(body: ByteBuffer) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = "application/json"
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
}

extension HTTPField.Name {
    package static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
