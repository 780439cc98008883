import { Type } from 'typebox';
import { BLOCKER_MODES } from '../../domain/vocabulary.js';
import { StringEnum } from '../../toolkit/schema-helpers.js';
import { HOST_OR_HTTP_URL_FORMAT } from '../../toolkit/web-address.js';
import { BLOCKER_CATEGORY_IDS } from '../blocker/blocker.categories.js';

/*
 * What one session may weigh, so that no request costs more than 200 ms or answers more
 * than 16 MiB whatever other users stored (contract section 6, "Cost of a request"): a
 * listing page of 500 items, each repeating its session's fields, stays well under 16 MiB
 * of JSON (docs/security.md has the arithmetic; a page also stops at PAGE_BYTE_BUDGET).
 * Measured as the UTF-8 bytes of the JSON the API answers with, escapes included.
 */
export const MAX_WEBSITE_BLOCKER_BYTES = 12 * 1024;
export const MAX_SNOOZE_APPS_BYTES = 4 * 1024;
export const WebsiteBlocker = Type.Object(
  {
    mode: StringEnum(BLOCKER_MODES, { description: '`preset`: block the categories; `custom`: block the urls too.' }),
    category: Type.Optional(
      Type.Array(StringEnum(BLOCKER_CATEGORY_IDS), {
        maxItems: 100,
        default: [],
        description: 'Preset categories to block, as `GET /api/v1/blocker/categories` lists them with their domains.',
      }),
    ),
    urls: Type.Optional(
      Type.Array(
        Type.String({
          minLength: 1,
          maxLength: 2048,
          format: HOST_OR_HTTP_URL_FORMAT,
          'x-message': 'must be a host name or an http(s) URL (WHATWG URL syntax, port 0–65535)',
        }),
        {
          maxItems: 500,
          default: [],
          description:
            'Host names (internationalized ones too: `münchen.de` or `xn--mnchen-3ya.de`) or http(s) URLs, at most 500, as the WHATWG URL standard parses them; stored as sent.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
