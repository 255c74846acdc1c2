/// Every method of the zone service API (`app.imprint.zone.*`), with its NSID and HTTP kind.
enum ZoneMethod: String, CaseIterable, Sendable {
    case createZone, deleteZone, uploadAsset, saveRecords, fetchChanges, getRecord, getAsset
    case deleteRecords, subscribeZone, getUsage
    /// v1.1: epoch-tied compaction of a shared zone.
    case compactZone
    /// v1.1: records for several inbox zones in one request (mailbox fan-out).
    case saveToInboxes
    /// v1.2: an inbox's owner registers or withdraws a write capability for it.
    case putInboxCapability

    static let namespace = "app.imprint.zone"

    /// The NSID, e.g. `app.imprint.zone.saveRecords`; also the service-auth JWT's `lxm`.
    var nsid: String { "\(Self.namespace).\(rawValue)" }

    /// `/xrpc/<nsid>`.
    var path: String { "/xrpc/\(nsid)" }

    /// Procedures are `POST`, queries `GET`.
    var isProcedure: Bool {
        switch self {
        case .createZone, .deleteZone, .uploadAsset, .saveRecords, .deleteRecords, .compactZone, .saveToInboxes, .putInboxCapability: true
        case .fetchChanges, .getRecord, .getAsset, .subscribeZone, .getUsage: false
        }
    }
}
