// Package transport speaks the backend side of the Agent Hooks Protocol
// (AHP): JSON-RPC 2.0 framing, the AHP wire types, request validation in the
// order the protocol reference prescribes, and the stdio binding.
//
// It knows nothing about how decisions are made: a [Server] hands each valid
// hooks/intercept request to an [Interceptor] and each hooks/observe
// notification to an [Observer].
package transport
