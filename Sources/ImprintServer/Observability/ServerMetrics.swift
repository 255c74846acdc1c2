import Prometheus

/// The service's Prometheus registry and the metrics it keeps, served at `/metrics`.
public struct ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let subscribers: Gauge

    static let durationBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    static var requests: MetricNameDescriptor {
        .init(metricName: "imprint_http_requests", unitName: "total", helpText: "HTTP requests by route and status")
    }
    static var latency: MetricNameDescriptor {
        .init(metricName: "imprint_http_request_duration", unitName: "seconds", helpText: "HTTP request latency by route")
    }
    static var requestBytes: MetricNameDescriptor {
        .init(metricName: "imprint_http_request_body_bytes", unitName: "total", helpText: "Request body bytes (Content-Length) by route")
    }
    static var rejections: MetricNameDescriptor {
        .init(metricName: "imprint_rejections", unitName: "total", helpText: "Rejected requests by error name")
    }
    static var ephemeralDropped: MetricNameDescriptor {
        .init(metricName: "imprint_ephemeral_dropped", unitName: "total",
              helpText: "Ephemeral messages a subscriber missed because it read too slowly, by subscriber kind (socket, stream)")
    }

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        subscribers = registry.makeGauge(descriptor: .init(metricName: "imprint_event", unitName: "subscribers", helpText: "Open subscribeConvoEvents streams"))
    }

    /// `bodyBytes`: the request's declared `Content-Length`, if any.
    func recordRequest(route: String, status: Int, duration: Duration, bodyBytes: Int? = nil) {
        registry.makeCounter(descriptor: Self.requests, labels: [("route", route), ("status", String(status))]).increment()
        if let bodyBytes, bodyBytes > 0 {
            registry.makeCounter(descriptor: Self.requestBytes, labels: [("route", route)]).increment(by: Int64(bodyBytes))
        }
        registry.makeDurationHistogram(descriptor: Self.latency, labels: [("route", route)], buckets: Self.durationBuckets)
            .record(duration)
    }

    func recordRejection(_ name: String) {
        registry.makeCounter(descriptor: Self.rejections, labels: [("error", name)]).increment()
    }

    /// An ephemeral message that one subscriber did not get: its socket's send buffer was full
    /// (`socket`), or its stream's buffer was and the oldest message went (`stream`).
    func recordEphemeralDropped(subscriber: String) {
        registry.makeCounter(descriptor: Self.ephemeralDropped, labels: [("subscriber", subscriber)]).increment()
    }

    public func exposition() -> String { registry.emitToString() }
}
