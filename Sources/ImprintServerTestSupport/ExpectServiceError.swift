import ImprintDelivery
import Testing

/// Expects `body` to fail with the service error `name` and HTTP `status`; returns it.
@discardableResult
public func expectServiceError<T>(
    _ status: Int, _ name: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> DeliveryServiceError? {
    do {
        let value = try await body()
        Issue.record("expected \(status) \(name), got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as DeliveryServiceError {
        #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
        #expect(error.name == name, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected \(status) \(name), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
