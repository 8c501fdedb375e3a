// The providers lmgate speaks to, one adapter per deployment kind: where a chat call goes,
// how the deployment's key is sent, and the exchanges that carry a call in the provider's
// wire format, translating its answer into typed usage and finish events for the call's
// meter (usage-meter.ts) and chat chunks for the client. The backend picks a deployment's
// adapter by its kind and asks nothing else about it: a new provider is one entry here,
// and test/api/providers.contract.test.ts runs the same cases against each.
//
// OpenAI's own endpoints besides chat (/embeddings, /responses, /completions passed through)
// are the OpenAI adapter's alone: the config allows them only on deployments of kind openai.
import type { BackendCall, ChunkSink, CompletionResult, StreamResult } from '../backend.js';
import { ANTHROPIC_VERSION } from '../../config/schema.js';
import { AnthropicCompletionExchange, AnthropicStreamExchange } from './anthropic-exchange.js';
import { CompletionExchange, StreamExchange } from './chat-exchange.js';
import type { Deployment, ProviderKind, ProviderWire } from './deployment.js';
import type { Exchange } from './exchange.js';

export interface ProviderAdapter extends ProviderWire {
  /** A chat call answered whole: the answer as a `chat.completion`. */
  complete(call: BackendCall, deployment: Deployment): Exchange<CompletionResult, BackendCall>;
  /** A chat call streamed: `chat.completion.chunk`s into the sink as the upstream's events arrive. */
  stream(call: BackendCall, deployment: Deployment, sink: ChunkSink): Exchange<StreamResult, BackendCall>;
}

/**
 * OpenAI's chat completions, as vLLM, Ollama, llama.cpp's server, LM Studio and OpenAI
 * speak it: the client's request passed through with only `model` changed, the answer
 * relayed as its bytes (the pass-through reads usage and finish reasons off the text).
 */
const openai: ProviderAdapter = {
  chatPath: '/chat/completions',
  authHeaders: (apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  complete: (call, deployment) => new CompletionExchange(call, deployment),
  stream: (call, deployment, sink) => new StreamExchange(call, deployment, sink),
};

/** Anthropic's Messages API: the call translated to a message request, the answer and each event translated back. */
const anthropic: ProviderAdapter = {
  chatPath: '/messages',
  authHeaders: (apiKey, version) => ({ 'anthropic-version': version ?? ANTHROPIC_VERSION, ...(apiKey ? { 'x-api-key': apiKey } : {}) }),
  complete: (call, deployment) => new AnthropicCompletionExchange(call, deployment),
  stream: (call, deployment, sink) => new AnthropicStreamExchange(call, deployment, sink),
};

export const PROVIDERS: Readonly<Record<ProviderKind, ProviderAdapter>> = { openai, anthropic };
