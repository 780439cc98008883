/**
 * The preset categories a session's `website_blocker.category` may name, each with the
 * domains it blocks, so that every blocking client enforces the same thing (contract
 * section 14). A domain covers its subdomains. The one source for the sessions schema's
 * enum, `GET /blocker/categories` and the domains `/me/now` expands.
 */
export const BLOCKER_CATEGORIES = {
  social: {
    name: 'Social media',
    domains: ['facebook.com', 'instagram.com', 'x.com', 'twitter.com', 'tiktok.com', 'linkedin.com', 'reddit.com', 'snapchat.com', 'pinterest.com', 'threads.net', 'bsky.app', 'mastodon.social'],
  },
  news: {
    name: 'News',
    domains: ['news.ycombinator.com', 'news.google.com', 'nytimes.com', 'washingtonpost.com', 'theguardian.com', 'bbc.com', 'bbc.co.uk', 'cnn.com', 'reuters.com', 'apnews.com'],
  },
  video: {
    name: 'Video and streaming',
    domains: ['youtube.com', 'netflix.com', 'twitch.tv', 'vimeo.com', 'disneyplus.com', 'primevideo.com', 'hulu.com', 'dailymotion.com'],
  },
  shopping: {
    name: 'Shopping',
    domains: ['amazon.com', 'ebay.com', 'etsy.com', 'aliexpress.com', 'walmart.com', 'target.com', 'temu.com', 'shein.com'],
  },
  games: {
    name: 'Games',
    domains: ['store.steampowered.com', 'steamcommunity.com', 'epicgames.com', 'roblox.com', 'chess.com', 'lichess.org', 'poki.com', 'miniclip.com'],
  },
  adult: {
    name: 'Adult content',
    domains: ['pornhub.com', 'xvideos.com', 'xnxx.com', 'xhamster.com', 'redtube.com', 'youporn.com', 'onlyfans.com', 'chaturbate.com'],
  },
  chat: {
    name: 'Chat',
    domains: ['web.whatsapp.com', 'messenger.com', 'discord.com', 'web.telegram.org', 'slack.com', 'teams.microsoft.com', 'chat.google.com'],
  },
  email: {
    name: 'Email',
    domains: ['mail.google.com', 'outlook.live.com', 'outlook.office.com', 'mail.yahoo.com', 'mail.proton.me', 'fastmail.com', 'mail.aol.com'],
  },
} as const satisfies Record<string, { name: string; domains: readonly string[] }>;

export type BlockerCategory = keyof typeof BLOCKER_CATEGORIES;

export const BLOCKER_CATEGORY_IDS = Object.keys(BLOCKER_CATEGORIES) as BlockerCategory[];

/** The domains of the named categories, each once, in category then list order; a name that is no category adds none. */
export function categoryDomains(categories: Iterable<string>): string[] {
  const domains = new Set<string>();
  for (const category of categories) {
    if (!Object.hasOwn(BLOCKER_CATEGORIES, category)) continue;
    for (const domain of BLOCKER_CATEGORIES[category as BlockerCategory].domains) domains.add(domain);
  }
  return [...domains];
}
