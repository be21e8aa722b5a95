-- Sample data for `make demo` and the end-to-end tests.
-- Runs as a superuser on a throwaway cluster, in database demo.

CREATE ROLE pgranger_svc LOGIN PASSWORD 'pgranger_svc' NOSUPERUSER NOCREATEDB NOCREATEROLE;

CREATE SCHEMA sales;
CREATE SCHEMA hr;

CREATE TABLE sales.orders (
    id          integer PRIMARY KEY,
    customer    text NOT NULL,
    ssn         text,
    email       text,
    amount      numeric(12,2),
    region      text NOT NULL,
    order_date  date
);

INSERT INTO sales.orders VALUES
    (1, 'Ada Lovelace',     '111-11-1111', 'ada@example.com',     1200.50, 'US',   '2024-01-15'),
    (2, 'Alan Turing',      '222-22-2222', 'alan@example.com',     830.00, 'EU',   '2024-02-03'),
    (3, 'Grace Hopper',     '333-33-3333', 'grace@example.com',   4410.25, 'US',   '2024-03-22'),
    (4, 'Edsger Dijkstra',  '444-44-4444', 'edsger@example.com',   299.99, 'EU',   '2024-04-09'),
    (5, 'Barbara Liskov',   '555-55-5555', 'barbara@example.com', 1780.00, 'US',   '2024-05-30'),
    (6, 'Donald Knuth',     '666-66-6666', 'don@example.com',      955.10, 'APAC', '2024-06-12'),
    (7, 'Frances Allen',    '777-77-7777', 'fran@example.com',    3120.00, 'EU',   '2024-07-01'),
    (8, 'John Backus',      NULL,          NULL,                    42.00, 'APAC', NULL);

CREATE TABLE hr.employees (
    id          integer PRIMARY KEY,
    name        text NOT NULL,
    email       text,
    salary      integer,
    department  text,
    hire_date   date
);

INSERT INTO hr.employees VALUES
    (1, 'Margaret Hamilton', 'margaret@example.com', 185000, 'Engineering', '2019-09-01'),
    (2, 'Katherine Johnson', 'katherine@example.com', 172000, 'Research',   '2020-01-13'),
    (3, 'Dennis Ritchie',    'dennis@example.com',   168000, 'Engineering', '2018-06-25');

CREATE TABLE hr.departments (
    id    integer PRIMARY KEY,
    name  text NOT NULL,
    floor integer
);

INSERT INTO hr.departments VALUES
    (1, 'Engineering', 3),
    (2, 'Research',    4);

-- Least privilege for the proxy's service role: it reads, nothing more.
GRANT USAGE ON SCHEMA sales, hr TO pgranger_svc;
GRANT SELECT ON ALL TABLES IN SCHEMA sales, hr TO pgranger_svc;
