// The service layer shared by the HTTP API, the MCP tools and the library: request schemas and limits,
// one function per request kind, and the mapping of errors to what a caller sees.
export { DEFAULT_LIMITS, ServiceLimitsSchema, resolveLimits } from './limits.js';
export type { ServiceLimits, ServiceLimitsInput } from './limits.js';
export {
  requestSchemas,
  bundleRequestShape,
  briefingRequestShape,
  packRequestShape,
  rankingsRequestShape,
  verifyRequestShape,
} from './requests.js';
export type { RequestSchemas, BundleRequest, BriefingRequest, PackRequest, RankingsRequest, VerifyRequest } from './requests.js';
export { RagContextSchema, RagHitSchema, RankingsSchema, ErrorBodySchema, VerifyAnswerSchema } from './responses.js';
export type { RagContext, RagHit, VerifyAnswer } from './responses.js';
export { serveBundle, serveBriefing, servePack, serveRankings, serveVerify, ragContextOf } from './service.js';
export type { ServiceContext } from './service.js';
export { parseRequest, errorAnswer } from './errors.js';
export type { ErrorBody, ErrorAnswer, RequestIssue } from './errors.js';
