// Where an endpoint may not be: an account registers any URL it likes, and without this
// lmgate would post (from inside the operator's network) to loopback, private ranges, or
// a cloud metadata service. The check runs on the address actually connected to (in the
// connection's DNS lookup), so a name that resolves somewhere private, or that changes
// what it resolves to after a first check, is refused too. An operator who delivers to
// their own network on purpose sets webhooks.allow_private_addresses.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent } from 'undici';

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';

  constructor(readonly address: string) {
    super(`refused: ${address} is a private or loopback address (webhooks.allow_private_addresses)`);
  }
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A DNS lookup that fails for a name resolving to any private address. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused) return callback(new PrivateAddressError(refused.address), '', 0);
    if (options.all) return (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
};

/** The connections deliveries are made on: to public addresses only, unless allowed. */
export function webhookAgent(allowPrivateAddresses: boolean): Agent {
  return new Agent({ connect: allowPrivateAddresses ? {} : { lookup: publicOnlyLookup }, keepAliveTimeout: 10_000 });
}

/** A URL naming a private address outright (no lookup happens for an IP literal). */
export function assertPublicHost(url: string, allowPrivateAddresses: boolean): void {
  if (allowPrivateAddresses) return;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isPrivateAddress(host)) throw new PrivateAddressError(host);
}
