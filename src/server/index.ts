// litm-pack/server: the HTTP API (Fastify) over a store, with the MCP tools at /mcp, and the service layer it
// is built on (the same functions the MCP tools call). Loads Fastify; the package root does not.
export { createServer, startServer } from './server.js';
export { ServerOptionsSchema, DEFAULT_BODY_LIMIT } from './options.js';
export type { ServerOptions, RequestLogLine, LogSink } from './options.js';
export type { RunningServer, ListenOptions } from './server.js';
export { METRIC_NAMES } from './metrics.js';
export { ApiKeys, ApiKeysSchema, parseApiKeys } from './auth.js';
export type { ApiKeysInput, Caller } from './auth.js';
export { openApiDocument } from './openapi.js';
export { httpSchemas } from './http-requests.js';
export { DEFAULT_LIMITS, ServiceLimitsSchema, resolveLimits } from '../service/limits.js';
export { requestSchemas } from '../service/requests.js';
export { RagContextSchema, RankingsSchema, ErrorBodySchema, StaleAnswerSchema, VerifyAnswerSchema } from '../service/responses.js';
export { CitationLedger } from '../service/ledger.js';
export type { LedgerOptions } from '../service/ledger.js';
export { serveBundle, serveBriefing, servePack, serveRankings, serveVerify, ragContextOf } from '../service/service.js';
export { parseRequest, errorAnswer } from '../service/errors.js';
export type { ServiceLimits, ServiceLimitsInput } from '../service/limits.js';
export type { RequestSchemas, BundleRequest, BriefingRequest, PackRequest, RankingsRequest, VerifyRequest } from '../service/requests.js';
export type { RagContext, RagHit, StaleAnswer, VerifyAnswer } from '../service/responses.js';
export type { ServiceContext } from '../service/service.js';
export type { ErrorBody, ErrorAnswer, RequestIssue } from '../service/errors.js';
