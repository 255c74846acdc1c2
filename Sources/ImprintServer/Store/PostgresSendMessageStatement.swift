import Foundation
import PostgresNIO

/// The call of `imprint_send_message` as a prepared statement: each pooled connection parses
/// and plans it once, and every later `sendMessage` sends only Bind/Execute (still one round trip).
struct PostgresSendMessageStatement: PostgresPreparedStatement {
    /// Connections cache the prepared statement by this name: change it whenever `sql` changes.
    static let name = "imprint_send_message_v2"
    static let sql = """
        SELECT r_outcome, r_epoch, r_seq, r_dids, r_providers
        FROM imprint_send_message($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
        """
    static let bindingDataTypes: [PostgresDataType] = [
        .text, .int8, .int8, .text, .text, .int8, .text, .text, .int8, .text, .int8, .text, .text, .bytea,
    ]

    /// `(outcome, epoch, seq, dids, providers)`: see `PostgresSchema.sendMessageFunction`.
    typealias Row = (String, Int?, Int?, [String]?, [String]?)

    var replayKey: String
    var replayExpiry: Int64
    var nowSeconds: Int64
    var convoId: String
    var sender: String
    var epoch: Int
    var messageType: String
    var hash: String
    var size: Int
    var recordName: String?
    var sentAt: Int64
    var sentAtText: String
    var clientMessageId: String?
    var commit: Data?

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 14)
        bindings.append(replayKey)
        bindings.append(replayExpiry)
        bindings.append(nowSeconds)
        bindings.append(convoId)
        bindings.append(sender)
        bindings.append(Int64(epoch))
        bindings.append(messageType)
        bindings.append(hash)
        bindings.append(Int64(size))
        bindings.append(recordName)
        bindings.append(sentAt)
        bindings.append(sentAtText)
        bindings.append(clientMessageId)
        try bindings.append(commit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
