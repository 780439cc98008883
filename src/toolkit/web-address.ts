import { domainToASCII } from 'node:url';

/*
 * Host names and http(s) URLs as a browser reads them: the WHATWG URL standard's parser
 * (Node's `URL`, `url.domainToASCII`) decides, so that what a blocking client will match
 * is what the API accepts. An internationalized name (`münchen.de`) is as valid as its
 * punycode (`xn--mnchen-3ya.de`); a port is 0–65535.
 */

/** The name of the JSON Schema `format` that checks isHostOrHttpUrl. */
export const HOST_OR_HTTP_URL_FORMAT = 'host-or-http-url';

/** A DNS name in ASCII: dot-separated labels of 1–63 letters, digits and inner hyphens. */
const ASCII_HOST = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
/** No white space and no credentials (`user@`): a URL to block, never one to log in with. */
const HTTP_URL = /^https?:\/\/[^\s/?#@]+(?:[/?#]\S*)?$/;

/** A DNS name in ASCII (RFC 1123 labels). */
export const isDnsName = (text: string) => ASCII_HOST.test(text);

/**
 * An `http://` or `https://` URL the WHATWG parser accepts, or a bare host name whose
 * ASCII form (`domainToASCII`, UTS #46) is a DNS name.
 */
export function isHostOrHttpUrl(text: string): boolean {
  if (/^https?:\/\//.test(text)) return HTTP_URL.test(text) && URL.canParse(text);
  const ascii = domainToASCII(text);
  return ascii !== '' && isDnsName(ascii);
}
