BEGIN TRANSACTION;
CREATE TABLE frontier_control (crawl TEXT PRIMARY KEY, stop REAL);
CREATE TABLE frontier_host (
        crawl TEXT NOT NULL, host TEXT NOT NULL,
        best REAL, rank REAL, next_allowed REAL NOT NULL DEFAULT 0, delay REAL,
        score_sum REAL NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0,
        hard_next REAL NOT NULL DEFAULT 0,
        link_sum REAL NOT NULL DEFAULT 0, link_n INTEGER NOT NULL DEFAULT 0,
        link_mask INTEGER NOT NULL DEFAULT 0, estimate REAL,
        probing INTEGER NOT NULL DEFAULT 0, down_until REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (crawl, host));
INSERT INTO "frontier_host" VALUES('old','old.test',1.99996000079998426102e+00,1.99999918368979567873e+00,1.79653059310218024251e+09,NULL,24.0,12,0.0,0.0,0,0,NULL,0,0.0);
CREATE TABLE frontier_robots (
        crawl TEXT NOT NULL, netloc TEXT NOT NULL, blob BLOB NOT NULL, until REAL NOT NULL,
        PRIMARY KEY (crawl, netloc));
INSERT INTO "frontier_robots" VALUES('old','old.test',X'789C030000000001',1.79661699286305761333e+09);
CREATE TABLE frontier_setup (
        crawl TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (crawl, name));
INSERT INTO "frontier_setup" VALUES('old','strategy','spitag');
INSERT INTO "frontier_setup" VALUES('old','seeds','a6ac9abe33fbdab9702ed62eeb355b2b');
CREATE TABLE frontier_url (
        crawl TEXT NOT NULL, url TEXT NOT NULL, host TEXT NOT NULL,
        state INTEGER NOT NULL, priority REAL NOT NULL, depth INTEGER NOT NULL,
        reason TEXT, lease_until REAL, owner TEXT, discovered REAL NOT NULL,
        revisit TEXT, tries INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (crawl, url));
INSERT INTO "frontier_url" VALUES('old','http://old.test/','old.test',2,1000000.0,0,NULL,NULL,NULL,1.79653059285045480723e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/1.html','old.test',2,1.99998000019999788712e+00,1,'{"strategy":"spitag","parent":"http://old.test/","parent_score":2.0}',NULL,NULL,1.79653059290867400167e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/2.html','old.test',2,1.99998000019999788712e+00,1,'{"strategy":"spitag","parent":"http://old.test/","parent_score":2.0}',NULL,NULL,1.79653059290867400167e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/3.html','old.test',2,1.99998000019999788712e+00,1,'{"strategy":"spitag","parent":"http://old.test/","parent_score":2.0}',NULL,NULL,1.79653059290867400167e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/4.html','old.test',2,1.99998000019999788712e+00,1,'{"strategy":"spitag","parent":"http://old.test/","parent_score":2.0}',NULL,NULL,1.79653059290867400167e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/13.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/3.html","parent_score":2.0}',NULL,NULL,1.79653059295352458954e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/14.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/3.html","parent_score":2.0}',NULL,NULL,1.79653059295352458954e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/15.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/3.html","parent_score":2.0}',NULL,NULL,1.79653059295352458954e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/16.html','old.test',2,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/3.html","parent_score":2.0}',NULL,NULL,1.79653059295352458954e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/17.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/4.html","parent_score":2.0}',NULL,NULL,1796530593.00184,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/18.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/4.html","parent_score":2.0}',NULL,NULL,1796530593.00184,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/19.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/4.html","parent_score":2.0}',NULL,NULL,1796530593.00184,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/20.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/4.html","parent_score":2.0}',NULL,NULL,1796530593.00184,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/9.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/2.html","parent_score":2.0}',NULL,NULL,1796530593.00184,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/10.html','old.test',0,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/2.html","parent_score":2.0}',NULL,NULL,1796530593.00184,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/11.html','old.test',2,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/2.html","parent_score":2.0}',NULL,NULL,1796530593.00184,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/12.html','old.test',2,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/2.html","parent_score":2.0}',NULL,NULL,1796530593.00184,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/5.html','old.test',2,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/1.html","parent_score":2.0}',NULL,NULL,1.79653059303597116471e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/6.html','old.test',2,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/1.html","parent_score":2.0}',NULL,NULL,1.79653059303597116471e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/7.html','old.test',2,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/1.html","parent_score":2.0}',NULL,NULL,1.79653059303597116471e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/8.html','old.test',2,1.99996000079998426102e+00,2,'{"strategy":"spitag","parent":"http://old.test/p/1.html","parent_score":2.0}',NULL,NULL,1.79653059303597116471e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/33.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/8.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/34.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/8.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/35.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/8.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/36.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/8.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/29.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/7.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/30.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/7.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/31.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/7.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/32.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/7.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/21.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/5.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/22.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/5.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/23.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/5.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/24.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/5.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/25.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/6.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/26.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/6.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/27.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/6.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
INSERT INTO "frontier_url" VALUES('old','http://old.test/p/28.html','old.test',0,1.99994000179994602106e+00,3,'{"strategy":"spitag","parent":"http://old.test/p/6.html","parent_score":2.0}',NULL,NULL,1.7965305931560516358e+09,NULL,0);
CREATE INDEX frontier_url_queue ON frontier_url (crawl, host, state, priority);
CREATE INDEX frontier_url_state ON frontier_url (crawl, state, lease_until);
CREATE INDEX frontier_host_rank ON frontier_host (crawl, rank) WHERE best IS NOT NULL;
CREATE INDEX frontier_host_ready ON frontier_host (crawl, next_allowed) WHERE best IS NOT NULL;
COMMIT;
