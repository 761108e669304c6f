// litm-pack/server: the HTTP API (Fastify) over a store, with the MCP tools at /mcp, and the service layer it
// is built on (the same functions the MCP tools call). Loads Fastify; the package root does not.
export { createServer, startServer, ServerOptionsSchema, DEFAULT_BODY_LIMIT } from './server.js';
export type { ServerOptions, RunningServer, ListenOptions, RequestLogLine, LogSink } from './server.js';
export { METRIC_NAMES } from './metrics.js';
export { ApiKeys, ApiKeysSchema, parseApiKeys } from './auth.js';
export type { ApiKeysInput, Caller } from './auth.js';
export { openApiDocument } from './openapi.js';
export { httpSchemas } from './http-requests.js';
export {
  DEFAULT_LIMITS,
  ServiceLimitsSchema,
  resolveLimits,
  requestSchemas,
  RagContextSchema,
  RankingsSchema,
  ErrorBodySchema,
  VerifyAnswerSchema,
  serveBundle,
  serveBriefing,
  servePack,
  serveRankings,
  serveVerify,
  ragContextOf,
  parseRequest,
  errorAnswer,
} from '../service/index.js';
export type {
  ServiceLimits,
  ServiceLimitsInput,
  RequestSchemas,
  BundleRequest,
  BriefingRequest,
  PackRequest,
  RankingsRequest,
  VerifyRequest,
  RagContext,
  RagHit,
  VerifyAnswer,
  ServiceContext,
  ErrorBody,
  ErrorAnswer,
  RequestIssue,
} from '../service/index.js';
