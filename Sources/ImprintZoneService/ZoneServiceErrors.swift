import HTTPTypes
import ImprintServer

/// The zone API's errors beyond the Delivery Service's: the same `{"error", "message"}` shape
/// and type (`DeliveryError`), so the server's error middleware renders them unchanged.
extension DeliveryError {
    static func zoneNotFound(_ zoneId: String) -> Self {
        .init(status: .notFound, name: "ZoneNotFound", message: "no zone \(zoneId)")
    }
    static func recordNotFound(_ name: String) -> Self {
        .init(status: .notFound, name: "RecordNotFound", message: "no record \(name)")
    }
    static func assetNotFound(_ hash: String) -> Self {
        .init(status: .notFound, name: "AssetNotFound", message: "no readable asset \(hash)")
    }
    static func recordExists(_ name: String) -> Self {
        .init(status: .conflict, name: "RecordExists", message: "record \(name) exists with another asset")
    }
    static func zoneExists(_ zoneId: String) -> Self {
        .init(status: .conflict, name: "ZoneExists", message: "zone \(zoneId) already exists")
    }
    static func changeTokenExpired() -> Self {
        .init(status: .gone, name: "ChangeTokenExpired", message: "unknown or expired change token; fetch from the start")
    }
    static func gone(_ message: String) -> Self {
        .init(status: .gone, name: "Gone", message: message)
    }
    static func quotaExceeded(quota: Int) -> Self {
        .init(status: .forbidden, name: "QuotaExceeded", message: "owner quota of \(quota) bytes exceeded")
    }
    static func rangeNotSatisfiable(size: Int) -> Self {
        .init(status: .rangeNotSatisfiable, name: "RangeNotSatisfiable", message: "range outside 0..<\(size)")
    }
}
