/// One dispatched server-sent event (fields as in the WHATWG EventSource spec).
public struct ServerSentEvent: Hashable, Sendable {
    public var id: String?
    public var event: String
    public var data: String

    public init(id: String?, event: String, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}

/// Incremental `text/event-stream` parser: feed bytes, get whole events back.
public struct ServerSentEventParser: Sendable {
    private var pending: [UInt8] = []
    private var id: String?
    private var event = ""
    private var dataLines: [String] = []
    private var skippedCarriageReturn = false

    public init() {}

    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [ServerSentEvent] where Bytes.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") && skippedCarriageReturn {
                skippedCarriageReturn = false
                continue
            }
            skippedCarriageReturn = byte == UInt8(ascii: "\r")
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if let event = processLine(String(decoding: pending, as: UTF8.self)) { events.append(event) }
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
            }
        }
        return events
    }

    private mutating func processLine(_ line: String) -> ServerSentEvent? {
        if line.isEmpty {
            defer {
                event = ""
                dataLines = []
            }
            guard !dataLines.isEmpty else { return nil }
            return ServerSentEvent(id: id, event: event.isEmpty ? "message" : event, data: dataLines.joined(separator: "\n"))
        }
        if line.hasPrefix(":") { return nil }
        let field: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            field = Substring(line)
            value = ""
        }
        switch field {
        case "id": id = String(value)
        case "event": event = String(value)
        case "data": dataLines.append(String(value))
        default: break
        }
        return nil
    }
}
