// Corporate proxies for everything the engine fetches: the remote backends (policy/remote/http.ts)
// and both LLM SDKs use Node's global fetch, which ignores HTTPS_PROXY before Node 24. undici's
// EnvHttpProxyAgent as the global dispatcher makes it honour HTTPS_PROXY / HTTP_PROXY / NO_PROXY
// (either case). The npm undici is pinned to the 6.x line Node 20 bundles (6.24.1 on 20.20), so its
// dispatcher speaks the interface the built-in fetch expects. Loopback is never proxied: a backend
// or sampler on this machine is reached directly, whatever NO_PROXY says.

const LOOPBACK = ['localhost', '127.0.0.1', '::1', '[::1]'];

export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy: string;
}

/** The proxy the environment asks for, or undefined when none is set. */
export function proxyFromEnv(env: NodeJS.ProcessEnv = process.env): ProxySettings | undefined {
  const pick = (name: string) => env[name.toLowerCase()] || env[name.toUpperCase()] || undefined;
  const httpProxy = pick('http_proxy');
  const httpsProxy = pick('https_proxy');
  if (!httpProxy && !httpsProxy) return undefined;
  const noProxy = [
    ...(pick('no_proxy') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    ...LOOPBACK,
  ];
  return { httpProxy, httpsProxy: httpsProxy ?? httpProxy, noProxy: [...new Set(noProxy)].join(',') };
}

/** Routes the process's fetch through the environment's proxy; returns what was installed. undici is loaded only when a proxy is set. */
export async function installEnvProxy(env: NodeJS.ProcessEnv = process.env): Promise<ProxySettings | undefined> {
  const p = proxyFromEnv(env);
  if (!p) return undefined;
  const { EnvHttpProxyAgent, setGlobalDispatcher } = await import('undici');
  setGlobalDispatcher(new EnvHttpProxyAgent({ httpProxy: p.httpProxy, httpsProxy: p.httpsProxy, noProxy: p.noProxy }));
  return p;
}
