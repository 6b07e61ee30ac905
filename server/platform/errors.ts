/**
 * Domain errors. The domain throws these; the HTTP layer maps them to the spec's status codes
 * and `{data: null, error}` bodies. Nothing here knows about HTTP beyond the status number.
 */
export class AppError extends Error {
  readonly status: number;
  readonly details?: Record<string, string>;
  constructor(status: number, message: string, details?: Record<string, string>) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    if (details) this.details = details;
  }
}

export class BadRequestError extends AppError {
  constructor(message = 'Bad request') {
    super(400, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor() {
    super(401, 'Invalid or missing API key');
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found') {
    super(404, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor() {
    super(413, 'Request body too large');
  }
}

/** 422 with `details` keyed by dotted field path. */
export class ValidationError extends AppError {
  constructor(details: Record<string, string>, message = 'Validation failed') {
    super(422, message, details);
  }
}

export class RateLimitError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(429, `Rate limit exceeded. Retry after ${retryAfterSeconds} seconds.`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Error texts for 404s, as DESIGN §3 lists them. */
export const notFound = {
  node: () => new NotFoundError('Node not found'),
  batch: () => new NotFoundError('Batch not found'),
  rule: () => new NotFoundError('Rule not found'),
  template: () => new NotFoundError('Template not found'),
  webhook: () => new NotFoundError('Webhook not found'),
  apiKey: () => new NotFoundError('API key not found'),
};
