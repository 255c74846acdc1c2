import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// Per-request facts a handler learns (the caller DID, the method) that the request log
/// line and metrics need once the response is made.
public final class RequestAnnotations: Sendable {
    private let state = NIOLockedValueBox<(caller: String?, route: String?, errorName: String?)>((nil, nil, nil))

    public init() {}

    public var caller: String? {
        get { state.withLockedValue { $0.caller } }
        set { state.withLockedValue { $0.caller = newValue } }
    }

    /// A bounded label for the request (a method NSID or a fixed path), never raw input.
    public var route: String? {
        get { state.withLockedValue { $0.route } }
        set { state.withLockedValue { $0.route = newValue } }
    }

    /// The contract error name of a rejection that an inner `ContractErrorMiddleware`
    /// already turned into a response (the request log records it as a rejection).
    public var errorName: String? {
        get { state.withLockedValue { $0.errorName } }
        set { state.withLockedValue { $0.errorName = newValue } }
    }
}

/// The request context of the Delivery Service.
public struct DeliveryRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let annotations = RequestAnnotations()

    /// The connection the request came on (nil when the context was made without one).
    let channel: (any Channel)?

    public init(source: Source) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// Bodies are read with per-method limits by `RequestBodyReader`; this bounds anything else.
    public var maxUploadSize: Int { 1 << 20 }
}
